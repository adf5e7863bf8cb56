// invoke with id/src/input: xstate.spawnChild on entry, the child in the snapshot; completion
// arrives as xstate.done.actor.<id> (fed as an event), onDone assigns its output.
import { setup, assign, fromPromise } from 'xstate';

export const machine = setup({
  actors: { lookup: fromPromise(async ({ input }) => ({ found: input.q })) },
}).createMachine({
  id: 'search',
  context: { q: 'cats', result: null },
  initial: 'idle',
  states: {
    idle: { on: { SEARCH: { target: 'loading', actions: assign({ q: ({ event }) => event.q }) } } },
    loading: {
      invoke: {
        id: 'lookup1',
        src: 'lookup',
        input: ({ context }) => ({ q: context.q }),
        onDone: { target: 'ready', actions: assign({ result: ({ event }) => event.output }) },
      },
    },
    ready: { on: { SEARCH: { target: 'loading', actions: assign({ q: ({ event }) => event.q }) } } },
  },
});

export const events = [
  { type: 'SEARCH', q: 'dogs' },
  { type: 'xstate.done.actor.lookup1', output: { found: 'dogs', n: 3 } },
  { type: 'SEARCH', q: 'owls' },
  { type: 'xstate.done.actor.lookup1', output: [1, 2] },
];
export const can = [{ type: 'SEARCH', q: 'x' }, { type: 'xstate.done.actor.lookup1', output: null }];
export const matches = ['loading', 'ready'];
