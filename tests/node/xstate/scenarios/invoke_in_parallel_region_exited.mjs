// Invokes in two parallel regions; one region leaves its invoking state before completion, so
// that child is stopped; its completion arrives later (stale) while the other region's is live.
import { setup, assign, fromPromise } from 'xstate';

const push = (tag) => assign({ log: ({ context, event }) => [...context.log, `${tag}:${JSON.stringify(event.output ?? null)}`] });
export const machine = setup({
  actors: { fetchA: fromPromise(async () => 'A'), fetchB: fromPromise(async () => 'B') },
}).createMachine({
  id: 'dual',
  context: { log: [] },
  initial: 'loading',
  states: {
    loading: {
      type: 'parallel',
      states: {
        left: {
          initial: 'busy',
          states: {
            busy: {
              invoke: { id: 'left', src: 'fetchA', input: { side: 'left' }, onDone: { target: 'done', actions: push('left done') } },
              on: { SKIP_LEFT: 'skipped' },
            },
            skipped: {},
            done: { type: 'final' },
          },
        },
        right: {
          initial: 'busy',
          states: {
            busy: {
              invoke: { id: 'right', src: 'fetchB', input: { side: 'right' }, onDone: { target: 'done', actions: push('right done') } },
            },
            done: { type: 'final' },
          },
        },
      },
      onDone: { target: 'complete', actions: push('all done') },
    },
    complete: {},
  },
  on: { RESET: { target: '.loading', actions: push('reset') } },
});

export const events = [
  { type: 'SKIP_LEFT' },
  { type: 'xstate.done.actor.left', output: 'late left' },
  { type: 'xstate.done.actor.right', output: 'right!' },
  { type: 'RESET' },
  { type: 'xstate.done.actor.right', output: 'right again' },
  { type: 'xstate.done.actor.left', output: 'left now' },
  { type: 'xstate.done.actor.left', output: 'left twice' },
];
export const can = [{ type: 'SKIP_LEFT' }, { type: 'xstate.done.actor.left' }];
export const matches = ['complete', { loading: { left: 'skipped' } }];
