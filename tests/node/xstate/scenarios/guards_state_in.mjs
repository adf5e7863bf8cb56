// stateIn('#id') and stateIn(value) guards across parallel regions.
import { setup, stateIn, not } from 'xstate';

export const machine = setup({}).createMachine({
  id: 'car',
  type: 'parallel',
  states: {
    engine: {
      initial: 'off',
      states: {
        off: { on: { START: 'on' } },
        on: { id: 'engineOn', on: { STOP: { target: 'off', guard: stateIn({ gear: 'park' }) } } },
      },
    },
    gear: {
      initial: 'park',
      states: {
        park: { on: { DRIVE: { target: 'drive', guard: stateIn('#engineOn') } } },
        drive: { on: { PARK: 'park', REVERSE: { target: 'reverse', guard: not(stateIn('#car.engine.off')) } } },
        reverse: { on: { PARK: 'park' } },
      },
    },
  },
});

export const events = [
  { type: 'DRIVE' },
  { type: 'START' },
  { type: 'DRIVE' },
  { type: 'STOP' },
  { type: 'REVERSE' },
  { type: 'PARK' },
  { type: 'STOP' },
];
export const can = [{ type: 'DRIVE' }, { type: 'STOP' }, { type: 'REVERSE' }];
export const matches = [{ engine: 'on' }, { gear: 'drive' }, { engine: 'off', gear: 'park' }];
