// A completion for an invoke whose state was exited (the child was stopped): pinned as XState does.
import { setup, assign, fromPromise } from 'xstate';

export const machine = setup({
  actors: { slow: fromPromise(async () => 1) },
}).createMachine({
  id: 'stale',
  context: { got: [] },
  initial: 'a',
  states: {
    a: {
      invoke: { id: 'job', src: 'slow', onDone: { target: 'b', actions: assign({ got: ({ context, event }) => [...context.got, event.output] }) } },
      on: { SKIP: 'b' },
    },
    b: { on: { AGAIN: 'a' } },
  },
  on: {
    'xstate.done.actor.job': { actions: assign({ got: ({ context }) => [...context.got, 'root saw done'] }) },
  },
});

export const events = [
  { type: 'SKIP' },
  { type: 'xstate.done.actor.job', output: 'stale' },
  { type: 'AGAIN' },
  { type: 'xstate.done.actor.job', output: 'fresh' },
  { type: 'xstate.done.actor.job', output: 'stale again' },
];
export const can = [{ type: 'xstate.done.actor.job' }];
export const matches = ['a', 'b'];
