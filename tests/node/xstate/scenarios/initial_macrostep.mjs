// The initial transition is a full macrostep: entry raises are processed, always transitions
// run, the init event is {type: 'xstate.init', input}; actions see it.
import { setup, assign, raise } from 'xstate';

export const machine = setup({ actions: { hello: () => {} } }).createMachine({
  id: 'boot',
  context: ({ input }) => ({ seen: [], mode: input.mode }),
  initial: 'start',
  entry: [assign({ seen: ({ context, event }) => [...context.seen, `root entry ${event.type} ${JSON.stringify(event.input ?? null)}`] }), 'hello'],
  states: {
    start: {
      entry: [raise({ type: 'READY' }), assign({ seen: ({ context, event }) => [...context.seen, `start entry ${event.type}`] })],
      always: { guard: ({ context }) => context.mode === 'fast', target: 'fast' },
      on: { READY: { target: 'ready', actions: assign({ seen: ({ context, event }) => [...context.seen, `ready via ${event.type}`] }) } },
    },
    fast: { on: { READY: { target: 'ready', actions: assign({ seen: ({ context }) => [...context.seen, 'fast got READY'] }) } } },
    ready: {
      always: { target: 'settled', actions: assign({ seen: ({ context, event }) => [...context.seen, `always after ${event.type}`] }) },
    },
    settled: { on: { PING: { actions: assign({ seen: ({ context }) => [...context.seen, 'ping'] }) } } },
  },
});

export const input = { mode: 'fast' };
export const events = [{ type: 'PING' }];
export const can = [{ type: 'PING' }, { type: 'READY' }];
export const matches = ['settled', 'fast'];
