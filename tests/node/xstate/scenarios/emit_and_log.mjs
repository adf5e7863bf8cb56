// emit() and log() are returned as xstate.emit / xstate.log actions with resolved values.
import { setup, assign, emit, log } from 'xstate';

export const machine = setup({}).createMachine({
  id: 'talk',
  context: { said: 0 },
  initial: 'quiet',
  states: {
    quiet: {
      on: {
        SAY: {
          target: 'talking',
          actions: [
            assign({ said: ({ context }) => context.said + 1 }),
            emit(({ context, event }) => ({ type: 'said', text: event.text, count: context.said })),
            log(({ event }) => `said ${event.text}`, 'speech'),
            log('plain'),
          ],
        },
      },
    },
    talking: {
      entry: emit({ type: 'started' }),
      exit: log(({ context }) => context.said),
      on: { HUSH: 'quiet' },
    },
  },
});

export const events = [{ type: 'SAY', text: 'hi' }, { type: 'HUSH' }, { type: 'SAY', text: 'bye' }];
export const can = [{ type: 'HUSH' }];
export const matches = ['talking'];
