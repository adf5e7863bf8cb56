// Several candidate transitions for one event: the first whose guard passes wins (document order).
import { setup, assign } from 'xstate';

export const machine = setup({
  guards: {
    isBig: ({ event }) => event.n > 100,
    isMedium: ({ event }) => event.n > 10,
  },
}).createMachine({
  id: 'sort',
  context: { last: null },
  initial: 'waiting',
  states: {
    waiting: {
      on: {
        NUM: [
          { guard: 'isBig', target: 'big', actions: assign({ last: 'big' }) },
          { guard: 'isMedium', target: 'medium', actions: assign({ last: 'medium' }) },
          { target: 'small', actions: assign({ last: 'small' }) },
        ],
      },
    },
    big: { on: { BACK: 'waiting' } },
    medium: { on: { BACK: 'waiting' } },
    small: { on: { BACK: 'waiting' } },
  },
});

export const events = [
  { type: 'NUM', n: 5 },
  { type: 'BACK' },
  { type: 'NUM', n: 50 },
  { type: 'BACK' },
  { type: 'NUM', n: 500 },
  { type: 'BACK' },
];
export const can = [{ type: 'NUM', n: 1 }, { type: 'BACK' }];
export const matches = ['big', 'medium', 'small', 'waiting'];
