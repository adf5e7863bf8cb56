// XState's id.test.ts, "should work with keys that have escaped periods" (issue 22's machine 2):
// a state keyed 'foo.bar' and the path foo > bar both get the default id '(machine).foo.bar'.
// XState keeps the later one in its id map and accepts the machine; the sibling target
// 'foo\\.bar' (escaped) goes to the state keyed 'foo.bar'. Its twin
// id_escaped_key_periods_unescaped sends 'unescaped' (-> {foo: 'bar'}) from the same start.
import { createMachine } from 'xstate';

export const machine = createMachine({
  initial: 'start',
  states: {
    start: { on: { escaped: 'foo\\.bar', unescaped: 'foo.bar' } },
    'foo.bar': {},
    foo: { initial: 'bar', states: { bar: {} } },
  },
});

export const events = [{ type: 'escaped' }, { type: 'unescaped' }];
export const can = [{ type: 'escaped' }, { type: 'unescaped' }];
export const matches = ['foo.bar', { foo: 'bar' }];
