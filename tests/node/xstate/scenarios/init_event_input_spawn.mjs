// Entry actions of the initial states see the xstate.init event (with input); an invoke input
// and a spawn input built from it; a region reaching final through always during init.
import { setup, assign, spawnChild, fromPromise } from 'xstate';

export const machine = setup({ actors: { w: fromPromise(async () => 0) } }).createMachine({
  id: 'initspawn',
  context: ({ input }) => ({ user: input.user }),
  type: 'parallel',
  states: {
    work: {
      initial: 'running',
      states: {
        running: {
          entry: spawnChild('w', { id: 'spawned', input: ({ event }) => ({ from: event.type, user: event.input.user }) }),
          invoke: { id: 'invoked', src: 'w', input: ({ context, event }) => ({ user: context.user, type: event.type }) },
        },
      },
    },
    flag: {
      initial: 'check',
      states: {
        check: { always: { target: 'set', guard: ({ event }) => event.type === 'xstate.init' } },
        set: { type: 'final' },
      },
      onDone: { actions: assign({ flagDone: ({ event }) => event.type }) },
    },
  },
});

export const input = { user: 'ann' };
export const events = [{ type: 'NOTHING' }];
export const can = [{ type: 'NOTHING' }];
export const matches = [{ flag: 'set' }];
