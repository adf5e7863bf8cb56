// Shallow history with no default target: falls back to the parent's initial state.
import { setup } from 'xstate';

export const machine = setup({ actions: { enterB: () => {} } }).createMachine({
  id: 'tabs',
  initial: 'panel',
  states: {
    panel: {
      initial: 'a',
      states: {
        a: { on: { NEXT: 'b' } },
        b: { entry: 'enterB', on: { NEXT: 'c' } },
        c: {},
        last: { type: 'history' },
      },
      on: { CLOSE: 'closed' },
    },
    closed: { on: { REOPEN: 'panel.last', FRESH: 'panel' } },
  },
});

export const events = [
  { type: 'CLOSE' },
  { type: 'REOPEN' },
  { type: 'NEXT' },
  { type: 'CLOSE' },
  { type: 'REOPEN' },
  { type: 'NEXT' },
  { type: 'CLOSE' },
  { type: 'FRESH' },
  { type: 'CLOSE' },
  { type: 'REOPEN' },
];
export const can = [{ type: 'REOPEN' }, { type: 'NEXT' }];
export const matches = [{ panel: 'a' }, { panel: 'b' }, { panel: 'c' }];
