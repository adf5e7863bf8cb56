// A machine whose initial state is final is done after initialTransition, with output; an
// always chain can also reach a final state during the initial macrostep.
import { setup, assign } from 'xstate';

export const machine = setup({}).createMachine({
  id: 'instant',
  context: ({ input }) => ({ n: input.n }),
  initial: 'check',
  states: {
    check: {
      always: [
        { guard: ({ context }) => context.n > 0, target: 'positive', actions: assign({ n: ({ context }) => context.n * 10 }) },
        { target: 'nonPositive' },
      ],
    },
    positive: { type: 'final' },
    nonPositive: { on: { RETRY: 'check' } },
  },
  output: ({ context, event }) => ({ n: context.n, via: event.type }),
});

export const input = { n: 4 };
export const events = [{ type: 'RETRY' }];
export const can = [{ type: 'RETRY' }];
export const matches = ['positive'];
