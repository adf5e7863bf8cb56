// The `*` descriptor matches any event, but explicit descriptors take precedence over it.
import { setup, assign } from 'xstate';

export const machine = setup({}).createMachine({
  id: 'catchall',
  context: { caught: [], explicit: 0 },
  initial: 'listening',
  states: {
    listening: {
      on: {
        KNOWN: { actions: assign({ explicit: ({ context }) => context.explicit + 1 }) },
        '*': { actions: assign({ caught: ({ context, event }) => [...context.caught, event.type] }) },
        QUIT: 'quit',
      },
    },
    quit: { on: { '*': 'listening' } },
  },
});

export const events = [
  { type: 'KNOWN' },
  { type: 'random' },
  { type: 'other.thing' },
  { type: 'QUIT' },
  { type: 'whatever' },
  { type: 'KNOWN' },
];
export const can = [{ type: 'anything' }, { type: 'QUIT' }];
export const matches = ['listening', 'quit'];
