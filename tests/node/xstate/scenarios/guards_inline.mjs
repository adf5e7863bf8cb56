// Inline guard functions on transitions and always; a guard reading the event and the context.
import { setup, assign } from 'xstate';

export const machine = setup({}).createMachine({
  id: 'gate',
  context: { opened: 0 },
  initial: 'closed',
  states: {
    closed: {
      on: {
        KNOCK: [
          { guard: ({ event }) => event.secret === 'sesame', target: 'open' },
          { guard: ({ context }) => context.opened > 1, target: 'open' },
        ],
      },
    },
    open: {
      entry: assign({ opened: ({ context }) => context.opened + 1 }),
      always: { guard: ({ context }) => context.opened >= 3, target: 'broken' },
      on: { CLOSE: 'closed' },
    },
    broken: {},
  },
});

export const events = [
  { type: 'KNOCK', secret: 'x' },
  { type: 'KNOCK', secret: 'sesame' },
  { type: 'CLOSE' },
  { type: 'KNOCK', secret: 'sesame' },
  { type: 'CLOSE' },
  { type: 'KNOCK', secret: 'nope' },
];
export const can = [{ type: 'KNOCK', secret: 'sesame' }, { type: 'KNOCK', secret: 'x' }, { type: 'CLOSE' }];
export const matches = ['closed', 'open', 'broken'];
