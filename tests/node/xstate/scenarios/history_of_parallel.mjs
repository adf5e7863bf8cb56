// Shallow history whose remembered child is a parallel state (regions restart at their initial
// states), deep history through the same parallel, and a transition to a history node from
// inside its own parent.
import { setup } from 'xstate';

export const machine = setup({}).createMachine({
  id: 'hp',
  initial: 'main',
  states: {
    main: {
      initial: 'simple',
      on: { AWAY: 'away' },
      states: {
        simple: { on: { SPLIT: 'split' } },
        split: {
          type: 'parallel',
          states: {
            x: { initial: 'x1', states: { x1: { on: { X: 'x2' } }, x2: {} } },
            y: { initial: 'y1', states: { y1: { on: { Y: 'y2' } }, y2: { on: { SELF_HIST: '#hp.main.shallow' } } } },
          },
          on: { SIMPLE: 'simple' },
        },
        shallow: { type: 'history' },
        deep: { type: 'history', history: 'deep' },
      },
    },
    away: { on: { BACK_SHALLOW: 'main.shallow', BACK_DEEP: 'main.deep' } },
  },
});

export const events = [
  { type: 'SPLIT' },
  { type: 'X' },
  { type: 'Y' },
  { type: 'AWAY' },
  { type: 'BACK_SHALLOW' },
  { type: 'X' },
  { type: 'Y' },
  { type: 'AWAY' },
  { type: 'BACK_DEEP' },
  { type: 'SELF_HIST' },
];
export const can = [{ type: 'X' }, { type: 'SELF_HIST' }];
export const matches = [{ main: { split: { x: 'x2', y: 'y2' } } }, { main: 'split' }];
