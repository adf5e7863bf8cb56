// Delayed raise: returned as an xstate.raise action with delay and id, never processed by the pure
// transition; feeding the event back is how a host delivers it; cancel(id) is an xstate.cancel action.
import { setup, assign, raise, cancel } from 'xstate';

export const machine = setup({ delays: { short: 250 } }).createMachine({
  id: 'timer',
  context: { pings: 0 },
  initial: 'waiting',
  states: {
    waiting: {
      entry: [raise({ type: 'PING' }, { delay: 1000, id: 'ping' }), raise({ type: 'PING' }, { delay: 'short' })],
      on: {
        PING: { actions: assign({ pings: ({ context }) => context.pings + 1 }) },
        STOP: { target: 'stopped', actions: cancel('ping') },
        DYN: { actions: raise(({ event }) => ({ type: 'PING', ms: event.ms }), { delay: ({ event }) => event.ms, id: 'dyn' }) },
      },
    },
    stopped: { on: { PING: { actions: assign({ pings: -1 }) } } },
  },
});

export const events = [
  { type: 'PING' },
  { type: 'DYN', ms: 42 },
  { type: 'STOP' },
  { type: 'PING' },
];
export const can = [{ type: 'PING' }, { type: 'STOP' }];
export const matches = ['waiting', 'stopped'];
