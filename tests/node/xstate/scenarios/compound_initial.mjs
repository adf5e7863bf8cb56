// Compound states enter their `initial` child; entry/exit actions run outer-in / inner-out.
import { setup } from 'xstate';

export const machine = setup({
  actions: {
    enterOff: () => {}, exitOff: () => {},
    enterOn: () => {}, exitOn: () => {},
    enterLow: () => {}, exitLow: () => {},
    enterHigh: () => {}, exitHigh: () => {},
  },
}).createMachine({
  id: 'lamp',
  initial: 'off',
  states: {
    off: { entry: 'enterOff', exit: 'exitOff', on: { TOGGLE: 'on' } },
    on: {
      entry: 'enterOn',
      exit: 'exitOn',
      initial: 'low',
      on: { TOGGLE: 'off' },
      states: {
        low: { entry: 'enterLow', exit: 'exitLow', on: { UP: 'high' } },
        high: { entry: 'enterHigh', exit: 'exitHigh', on: { DOWN: 'low' } },
      },
    },
  },
});

export const events = [
  { type: 'TOGGLE' },
  { type: 'UP' },
  { type: 'UP' },
  { type: 'TOGGLE' },
  { type: 'TOGGLE' },
  { type: 'DOWN' },
];
export const can = [{ type: 'UP' }, { type: 'DOWN' }, { type: 'TOGGLE' }];
export const matches = ['off', 'on', { on: 'low' }, { on: 'high' }];
