// An xstate.error.actor.<id> nobody handles puts the machine in status "error" with that error;
// later events are still given to transition (pinned as XState does).
import { setup, assign, fromPromise } from 'xstate';

export const machine = setup({
  actors: { risky: fromPromise(async () => 1) },
}).createMachine({
  id: 'fragile',
  context: { n: 0 },
  initial: 'working',
  states: {
    working: {
      invoke: { id: 'risk', src: 'risky' },
      on: { BUMP: { actions: assign({ n: ({ context }) => context.n + 1 }) } },
    },
  },
});

export const events = [
  { type: 'BUMP' },
  { type: 'xstate.error.actor.other', error: 'not ours' },
  { type: 'xstate.error.actor.risk', error: { reason: 'exploded' } },
  { type: 'BUMP' },
];
export const can = [{ type: 'BUMP' }];
export const matches = ['working'];
