// Ordering on the internal queue: events raised by entry actions of a final state are queued
// before the xstate.done.state event it produces; a raise in an exit action is queued too.
import { setup, assign, raise } from 'xstate';

const push = (tag) => assign({ trail: ({ context, event }) => [...context.trail, `${tag}<${event.type}>`] });
export const machine = setup({}).createMachine({
  id: 'q',
  context: { trail: [] },
  initial: 'job',
  states: {
    job: {
      initial: 'run',
      states: {
        run: { exit: raise({ type: 'FROM_EXIT' }), on: { FINISH: 'end' } },
        end: { type: 'final', entry: [raise({ type: 'FROM_FINAL' }), push('final entry')] },
      },
      on: {
        FROM_EXIT: { actions: push('job got') },
        FROM_FINAL: { actions: push('job got') },
      },
      onDone: { target: 'after', actions: push('onDone') },
    },
    after: {
      on: {
        FROM_EXIT: { actions: push('after got') },
        FROM_FINAL: { actions: push('after got') },
        RESTART: 'job',
      },
    },
  },
});

export const events = [{ type: 'FINISH' }, { type: 'RESTART' }];
export const can = [{ type: 'FINISH' }];
export const matches = ['after'];
