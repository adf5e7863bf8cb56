// sendTo an invoked child by id: an xstate.sendTo action (immediate and delayed, with id);
// the child is recorded in the snapshot; nothing is delivered under the pure API.
import { setup, sendTo, fromPromise } from 'xstate';

export const machine = setup({
  actors: { worker: fromPromise(async () => 'never runs') },
}).createMachine({
  id: 'boss',
  context: { job: 7 },
  initial: 'working',
  states: {
    working: {
      invoke: { id: 'w1', src: 'worker', input: ({ context }) => ({ job: context.job }) },
      on: {
        NUDGE: { actions: sendTo('w1', { type: 'HURRY' }) },
        LATER: { actions: sendTo('w1', ({ context, event }) => ({ type: 'CHECK', job: context.job, note: event.note }), { delay: 500, id: 'check' }) },
        DONE: 'idle',
      },
    },
    idle: { on: { BACK: 'working' } },
  },
});

export const events = [
  { type: 'NUDGE' },
  { type: 'LATER', note: 'soon' },
  { type: 'DONE' },
  { type: 'BACK' },
  { type: 'NUDGE' },
];
export const can = [{ type: 'NUDGE' }, { type: 'BACK' }];
export const matches = ['working', 'idle'];
