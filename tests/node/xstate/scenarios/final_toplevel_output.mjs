// A top-level final state ends the machine: status "done", machine output from context and event.
import { setup, assign } from 'xstate';

export const machine = setup({}).createMachine({
  id: 'quiz',
  context: ({ input }) => ({ score: 0, max: input.max }),
  initial: 'asking',
  states: {
    asking: {
      on: {
        RIGHT: { actions: assign({ score: ({ context }) => context.score + 1 }) },
        WRONG: {},
        END: 'over',
      },
    },
    over: { type: 'final', output: ({ context }) => ({ finalScore: context.score }) },
  },
  output: ({ context, event }) => ({ score: context.score, of: context.max, last: event.type }),
});

export const input = { max: 3 };
export const events = [{ type: 'RIGHT' }, { type: 'WRONG' }, { type: 'RIGHT' }, { type: 'END' }];
export const can = [{ type: 'RIGHT' }, { type: 'END' }];
export const matches = ['asking', 'over'];
