// XState's toStatePath takes the character after a backslash literally; after a trailing
// backslash there is none and it appends JavaScript's `undefined` as text. So the target
// '#some\\' (text: #some and one backslash) is the id 'someundefined', and the sibling target
// 'b\\' is the key 'bundefined', not the states whose id or key ends in a backslash.
import { createMachine } from 'xstate';

export const machine = createMachine({
  id: 'm',
  initial: 'a',
  states: {
    a: { on: { BY_ID: '#some\\', BY_KEY: 'b\\' } },
    x: { id: 'someundefined', on: { BACK: 'a' } },
    y: { id: 'some\\', on: { BACK: 'a' } },
    bundefined: { on: { BACK: 'a' } },
    'b\\': { on: { BACK: 'a' } },
  },
});

export const events = [{ type: 'BY_ID' }, { type: 'BACK' }, { type: 'BY_KEY' }];
export const matches = ['x', 'bundefined'];
