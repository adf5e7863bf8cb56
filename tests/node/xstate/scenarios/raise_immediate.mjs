// raise() with no delay goes to the internal queue: processed after the current microstep, FIFO,
// before the next external event; raised events appear as xstate.raise? (pinned from XState).
import { setup, assign, raise } from 'xstate';

const push = (tag) => assign({ trail: ({ context }) => [...context.trail, tag] });
export const machine = setup({ actions: { seen: () => {} } }).createMachine({
  id: 'queue',
  context: { trail: [] },
  initial: 'one',
  states: {
    one: {
      on: {
        KICK: {
          target: 'two',
          actions: [raise({ type: 'FIRST' }), raise(({ event }) => ({ type: 'SECOND', from: event.type })), push('kick')],
        },
      },
    },
    two: {
      entry: [push('enter two'), raise({ type: 'THIRD' }, { id: 'third' })],
      on: {
        FIRST: { actions: [push('first'), 'seen'] },
        SECOND: { actions: [push('second'), raise({ type: 'FOURTH' })] },
        THIRD: { actions: push('third') },
        FOURTH: { target: 'three', actions: push('fourth') },
      },
    },
    three: { on: { KICK: 'one' } },
  },
});

export const events = [{ type: 'KICK' }, { type: 'KICK' }];
export const can = [{ type: 'KICK' }];
export const matches = ['three'];
