// onError handles xstate.error.actor.<id>; the error payload is available to actions.
import { setup, assign, fromPromise } from 'xstate';

export const machine = setup({
  actors: { pay: fromPromise(async () => 'ok') },
}).createMachine({
  id: 'checkout',
  context: { attempts: 0, lastError: null },
  initial: 'paying',
  states: {
    paying: {
      entry: assign({ attempts: ({ context }) => context.attempts + 1 }),
      invoke: {
        id: 'payment',
        src: 'pay',
        input: ({ context }) => ({ attempt: context.attempts }),
        onDone: 'paid',
        onError: [
          { guard: ({ context }) => context.attempts < 2, target: 'paying', reenter: true, actions: assign({ lastError: ({ event }) => event.error }) },
          { target: 'failed', actions: assign({ lastError: ({ event }) => event.error }) },
        ],
      },
    },
    paid: { type: 'final' },
    failed: {},
  },
});

export const events = [
  { type: 'xstate.error.actor.payment', error: { message: 'card declined', code: 402 } },
  { type: 'xstate.error.actor.payment', error: 'timeout' },
  { type: 'xstate.done.actor.payment', output: 'late' },
];
export const can = [{ type: 'xstate.done.actor.payment' }];
export const matches = ['paying', 'failed'];
