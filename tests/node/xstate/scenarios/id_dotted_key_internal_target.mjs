// resolveTarget builds a `.child` target of a non-root state as its key + the target and reads
// that as a path from the parent, split on unescaped dots. From the state keyed 'foo.bar', the
// target '.other' is therefore foo > bar > other (the nested state), not its own child `other`;
// 'foo\\.bar.other' (escaped) from a sibling reaches its own child.
import { createMachine } from 'xstate';

export const machine = createMachine({
  id: 'm',
  initial: 'start',
  states: {
    start: { on: { KEYED: 'foo\\.bar', NESTED: 'foo.bar' } },
    'foo.bar': {
      initial: 'child',
      states: { child: {}, other: {} },
      on: { IN: '.other', BACK: 'start' },
    },
    foo: {
      initial: 'bar',
      states: { bar: { initial: 'x', states: { x: {}, other: {} } } },
      on: { BACK: 'start', OWN: 'foo\\.bar.other' },
    },
  },
});

export const events = [
  { type: 'KEYED' },
  { type: 'IN' },
  { type: 'BACK' },
  { type: 'NESTED' },
  { type: 'OWN' },
];
export const matches = [{ foo: { bar: 'other' } }, { 'foo.bar': 'other' }];
