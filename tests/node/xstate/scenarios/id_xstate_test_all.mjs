// XState's id.test.ts, "State node IDs" (testAll on idMachine): `#id` targets and `#id.child`
// targets (an id, then a child path). One fold walks every from-state/event pair of the test:
// {A:foo} -NEXT-> {A:bar} -NEXT-> {B:foo} -NEXT,NEXT-> {A:foo} -NEXT_DOT_RESOLVE-> {B:bar}
// -NEXT-> {A:foo} -NEXT-> {A:bar} -NEXT-> {B:foo} -NEXT_DOT-> {B:dot}.
import { createMachine } from 'xstate';

export const machine = createMachine({
  initial: 'A',
  states: {
    A: {
      id: 'A',
      initial: 'foo',
      states: {
        foo: { id: 'A_foo', on: { NEXT: '#A_bar' } },
        bar: { id: 'A_bar', on: { NEXT: '#B_foo' } },
      },
      on: { NEXT_DOT_RESOLVE: '#B.bar' },
    },
    B: {
      id: 'B',
      initial: 'foo',
      states: {
        foo: { id: 'B_foo', on: { NEXT: '#B_bar', NEXT_DOT: '#B.dot' } },
        bar: { id: 'B_bar', on: { NEXT: '#A_foo' } },
        dot: {},
      },
    },
  },
});

export const events = [
  { type: 'NEXT' },
  { type: 'NEXT' },
  { type: 'NEXT' },
  { type: 'NEXT' },
  { type: 'NEXT_DOT_RESOLVE' },
  { type: 'NEXT' },
  { type: 'NEXT' },
  { type: 'NEXT' },
  { type: 'NEXT_DOT' },
];
export const can = [{ type: 'NEXT' }, { type: 'NEXT_DOT' }, { type: 'NEXT_DOT_RESOLVE' }];
export const matches = [{ A: 'bar' }, { B: 'dot' }, 'B'];
