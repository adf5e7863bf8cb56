// An `always` transition that raises: the raised event is queued and handled after the
// eventless transitions settle, in the same macrostep, possibly enabling more `always` moves.
import { setup, assign, raise } from 'xstate';

const push = (tag) => assign({ trail: ({ context }) => [...context.trail, tag] });
export const machine = setup({}).createMachine({
  id: 'chain',
  context: { trail: [], armed: false },
  initial: 'start',
  states: {
    start: { on: { GO: 'a' } },
    a: {
      entry: push('enter a'),
      always: { target: 'b', actions: [raise({ type: 'PING' }), push('a->b')] },
    },
    b: {
      entry: [push('enter b'), raise({ type: 'PONG' })],
      on: {
        PING: { actions: [push('ping in b'), assign({ armed: true })] },
        PONG: { target: 'c', actions: push('pong in b') },
      },
    },
    c: {
      entry: push('enter c'),
      always: { guard: ({ context }) => context.armed, target: 'd', actions: push('c->d armed') },
      on: { PING: { actions: push('ping in c') } },
    },
    d: { entry: push('enter d'), on: { GO: 'start' } },
  },
});

export const events = [{ type: 'GO' }, { type: 'GO' }, { type: 'PING' }];
export const can = [{ type: 'GO' }, { type: 'PING' }];
export const matches = ['d', 'start'];
