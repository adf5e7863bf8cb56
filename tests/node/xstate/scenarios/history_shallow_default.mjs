// Shallow history with a default target: used before any history exists, then remembers one level.
import { setup } from 'xstate';

export const machine = setup({}).createMachine({
  id: 'player',
  initial: 'off',
  states: {
    off: { on: { POWER: 'on.hist', POWER_PLAIN: 'on' } },
    on: {
      initial: 'idle',
      on: { POWER: 'off' },
      states: {
        idle: { on: { PLAY: 'playing' } },
        playing: {
          initial: 'normal',
          on: { PAUSE: 'paused' },
          states: { normal: { on: { FAST: 'fast' } }, fast: {} },
        },
        paused: { on: { PLAY: 'playing' } },
        hist: { type: 'history', history: 'shallow', target: 'paused' },
      },
    },
  },
});

export const events = [
  { type: 'POWER' },
  { type: 'POWER' },
  { type: 'POWER_PLAIN' },
  { type: 'PLAY' },
  { type: 'FAST' },
  { type: 'POWER' },
  { type: 'POWER' },
  { type: 'POWER' },
  { type: 'POWER_PLAIN' },
];
export const can = [{ type: 'PLAY' }, { type: 'FAST' }];
export const matches = [{ on: 'paused' }, { on: { playing: 'normal' } }, { on: { playing: 'fast' } }];
