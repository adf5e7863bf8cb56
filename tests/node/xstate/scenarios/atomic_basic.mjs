// Atomic states and sibling targets; an unknown event changes nothing; plain-object context.
import { setup } from 'xstate';

export const machine = setup({
  actions: { onGreen: () => {}, onRed: () => {} },
}).createMachine({
  id: 'light',
  context: { cycles: 0 },
  initial: 'green',
  states: {
    green: { entry: 'onGreen', on: { NEXT: 'yellow' } },
    yellow: { on: { NEXT: 'red', BACK: 'green' } },
    red: { entry: 'onRed', on: { NEXT: 'green' } },
  },
});

export const events = [
  { type: 'NEXT' },
  { type: 'UNKNOWN' },
  { type: 'BACK' },
  { type: 'NEXT' },
  { type: 'NEXT' },
  { type: 'NEXT' },
];
export const can = [{ type: 'NEXT' }, { type: 'BACK' }, { type: 'UNKNOWN' }];
export const matches = ['green', 'yellow', 'red'];
