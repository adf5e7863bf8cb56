// Corners of delays and log: raise with delay 0 is still a delayed raise (returned, not queued);
// sendTo with a named delay; log() with no value logs {context, event}; cancel of an after id.
import { setup, assign, raise, sendTo, log, cancel, fromPromise } from 'xstate';

export const machine = setup({
  delays: { soon: 20 },
  actors: { svc: fromPromise(async () => 0) },
}).createMachine({
  id: 'corners',
  context: { n: 0 },
  initial: 'a',
  states: {
    a: {
      invoke: { id: 'svc', src: 'svc' },
      after: { 100: 'b' },
      on: {
        ZERO: { actions: raise({ type: 'TICK' }, { delay: 0 }) },
        TICK: { actions: assign({ n: ({ context }) => context.n + 1 }) },
        SEND: { actions: sendTo('svc', { type: 'HI' }, { delay: 'soon', id: 'hi' }) },
        LOG: { actions: log() },
        LOG_LABEL: { actions: log(undefined, 'with label') },
        STOP_TIMER: { actions: cancel('xstate.after.100.corners.a') },
      },
    },
    b: {},
  },
});

export const events = [
  { type: 'ZERO' },
  { type: 'TICK' },
  { type: 'SEND' },
  { type: 'LOG', extra: [1, { deep: true }] },
  { type: 'LOG_LABEL' },
  { type: 'STOP_TIMER' },
  { type: 'xstate.after.100.corners.a' },
];
export const can = [{ type: 'TICK' }];
export const matches = ['a', 'b'];
