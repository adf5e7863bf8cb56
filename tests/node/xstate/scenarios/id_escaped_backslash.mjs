// XState's id.test.ts, "should not treat escaped backslash as period's escape": the target
// '#some\\\\.thing' (text: #some, two backslashes, .thing) is the id 'some\' (one backslash),
// then its child 'thing'; not the state whose id is 'some\.thing'.
import { createMachine } from 'xstate';

export const machine = createMachine({
  initial: 'start',
  states: {
    start: { on: { EV: '#some\\\\.thing' } },
    foo: { id: 'some\\.thing' },
    bar: { id: 'some\\', initial: 'baz', states: { baz: {}, thing: {} } },
  },
});

export const events = [{ type: 'EV' }];
export const matches = [{ bar: 'thing' }, 'foo'];
