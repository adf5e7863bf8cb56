// An exception in an action during initialTransition: XState returns a snapshot with status
// "error" and the thrown error (it does not throw); later events are pinned as XState does.
import { setup, assign } from 'xstate';

export const machine = setup({}).createMachine({
  id: 'broken',
  context: { n: 0 },
  initial: 'start',
  states: {
    start: {
      entry: [
        assign({ n: 1 }),
        assign(() => {
          throw new Error('boom at entry');
        }),
      ],
      on: { NEXT: { target: 'next', actions: assign({ n: ({ context }) => context.n + 1 }) } },
    },
    next: {},
  },
});

export const events = [{ type: 'NEXT' }];
export const can = [{ type: 'NEXT' }];
export const matches = ['start', 'next'];
