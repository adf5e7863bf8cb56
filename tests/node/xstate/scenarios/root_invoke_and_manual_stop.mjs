// An invoke on the root node lives for the whole run; stopChild on an invoked child removes it
// early; leaving the invoking state afterwards still emits its stopChild (pinned as XState does).
import { setup, stopChild, fromPromise, assign } from 'xstate';

export const machine = setup({
  actors: { watcher: fromPromise(async () => 0), job: fromPromise(async () => 1) },
}).createMachine({
  id: 'rooted',
  context: { outputs: [] },
  invoke: { id: 'watch', src: 'watcher', input: ({ context }) => ({ size: context.outputs.length }), onDone: { actions: assign({ outputs: ({ context, event }) => [...context.outputs, `watch:${event.output}`] }) } },
  initial: 'working',
  states: {
    working: {
      invoke: { id: 'job', src: 'job', onDone: { target: 'idle', actions: assign({ outputs: ({ context, event }) => [...context.outputs, `job:${event.output}`] }) } },
      on: { KILL: { actions: stopChild('job') }, LEAVE: 'idle' },
    },
    idle: { on: { WORK: 'working' } },
  },
});

export const events = [
  { type: 'KILL' },
  { type: 'xstate.done.actor.job', output: 1 },
  { type: 'LEAVE' },
  { type: 'WORK' },
  { type: 'xstate.done.actor.job', output: 2 },
  { type: 'xstate.done.actor.watch', output: 9 },
  { type: 'xstate.done.actor.watch', output: 10 },
];
export const can = [{ type: 'KILL' }];
export const matches = ['working', 'idle'];
