// invoke without an id: XState generates one from the state node; several invokes on one state.
import { setup, fromPromise, assign } from 'xstate';

export const machine = setup({
  actors: { a: fromPromise(async () => 1), b: fromPromise(async () => 2) },
}).createMachine({
  id: 'anon',
  context: { outputs: [] },
  initial: 'running',
  states: {
    running: {
      invoke: [
        { src: 'a', input: { which: 'a' } },
        { src: 'b', id: 'named', onDone: { actions: assign({ outputs: ({ context, event }) => [...context.outputs, event.output] }) } },
      ],
      on: { STOP: 'stopped' },
    },
    stopped: {},
  },
});

export const events = [{ type: 'xstate.done.actor.named', output: 'b!' }, { type: 'STOP' }];
export const can = [{ type: 'STOP' }];
export const matches = ['running'];
