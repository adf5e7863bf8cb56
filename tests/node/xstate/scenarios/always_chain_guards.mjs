// Eventless `always` transitions run to a fixed point: a counter loop with guards, then onward.
import { setup, assign } from 'xstate';

export const machine = setup({
  guards: {
    belowLimit: ({ context }) => context.n < context.limit,
    reachedLimit: ({ context }) => context.n >= context.limit,
  },
  actions: { passed: () => {} },
}).createMachine({
  id: 'pump',
  context: ({ input }) => ({ n: 0, limit: input.limit, visits: 0 }),
  initial: 'idle',
  states: {
    idle: { on: { START: 'counting', LIMIT: { actions: assign({ limit: ({ event }) => event.limit }) } } },
    counting: {
      entry: assign({ visits: ({ context }) => context.visits + 1 }),
      always: [
        { guard: 'reachedLimit', target: 'checked' },
        { guard: 'belowLimit', target: 'bump' },
      ],
    },
    bump: {
      entry: [assign({ n: ({ context }) => context.n + 1 }), 'passed'],
      always: 'counting',
    },
    checked: {
      always: { target: 'idle', guard: ({ context }) => context.n > 100, actions: 'passed' },
      on: { RESET: { target: 'idle', actions: assign({ n: 0 }) } },
    },
  },
});

export const input = { limit: 3 };
export const events = [
  { type: 'START' },
  { type: 'RESET' },
  { type: 'LIMIT', limit: 1 },
  { type: 'START' },
  { type: 'RESET' },
  { type: 'LIMIT', limit: 0 },
  { type: 'START' },
];
export const can = [{ type: 'START' }, { type: 'RESET' }];
export const matches = ['idle', 'checked'];
