// `after` with named delays (number and function of context) and a guarded after-transition list.
import { setup, assign } from 'xstate';

export const machine = setup({
  delays: {
    retryDelay: ({ context }) => 100 * 2 ** context.attempts,
    timeout: 5000,
  },
}).createMachine({
  id: 'retry',
  context: { attempts: 0 },
  initial: 'waiting',
  states: {
    waiting: {
      after: {
        retryDelay: [
          { guard: ({ context }) => context.attempts < 2, target: 'waiting', reenter: true, actions: assign({ attempts: ({ context }) => context.attempts + 1 }) },
          { target: 'failed' },
        ],
        timeout: 'failed',
      },
      on: { OK: 'ok' },
    },
    failed: {},
    ok: {},
  },
});

export const events = [
  { type: 'xstate.after.retryDelay.retry.waiting' },
  { type: 'xstate.after.retryDelay.retry.waiting' },
  { type: 'xstate.after.retryDelay.retry.waiting' },
];
export const can = [{ type: 'OK' }];
export const matches = ['waiting', 'failed'];
