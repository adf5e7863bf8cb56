// invoke with inline actor logic (no name in setup): what XState records as `src`.
import { setup, fromPromise, assign } from 'xstate';

export const machine = setup({}).createMachine({
  id: 'inline',
  context: { out: null },
  initial: 'run',
  states: {
    run: {
      invoke: { id: 'anonJob', src: fromPromise(async () => 42), input: { k: 1 }, onDone: { target: 'done', actions: assign({ out: ({ event }) => event.output }) } },
    },
    done: {},
  },
});

export const events = [{ type: 'xstate.done.actor.anonJob', output: 42 }];
export const can = [];
export const matches = ['done'];
