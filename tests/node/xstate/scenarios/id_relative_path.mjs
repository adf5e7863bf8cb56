// XState's id.test.ts, "should work with ID + relative path": the root's target '#bar.qux.quux'
// is the id `bar`, then its child `qux`, then `quux` (whose own id is the string '#bar.qux.quux').
import { createMachine } from 'xstate';

export const machine = createMachine({
  initial: 'foo',
  on: { ACTION: '#bar.qux.quux' },
  states: {
    foo: { id: 'foo' },
    bar: {
      id: 'bar',
      initial: 'baz',
      states: {
        baz: {},
        qux: { initial: 'quux', states: { quux: { id: '#bar.qux.quux' } } },
      },
    },
  },
});

export const events = [{ type: 'ACTION' }];
export const matches = [{ bar: { qux: 'quux' } }];
