// Guards and actions of eventless transitions see the event that started the macrostep.
import { setup, assign, raise } from 'xstate';

export const machine = setup({}).createMachine({
  id: 'sees',
  context: { trail: [] },
  initial: 'a',
  states: {
    a: { on: { GO: 'b', JUMP: 'b', RAISE: { target: 'b', actions: raise({ type: 'INNER' }) } } },
    b: {
      always: [
        { guard: ({ event }) => event.type === 'GO', target: 'c', actions: assign({ trail: ({ context, event }) => [...context.trail, `b->c on ${event.type}`] }) },
        { guard: ({ event }) => event.type === 'INNER', target: 'a', actions: assign({ trail: ({ context, event }) => [...context.trail, `b->a on ${event.type}`] }) },
      ],
      on: { INNER: { actions: assign({ trail: ({ context }) => [...context.trail, 'INNER handled in b'] }) }, BACK: 'a' },
    },
    c: { on: { BACK: 'a' } },
  },
});

export const events = [{ type: 'GO' }, { type: 'BACK' }, { type: 'JUMP' }, { type: 'BACK' }, { type: 'RAISE' }];
export const can = [{ type: 'BACK' }, { type: 'GO' }];
export const matches = ['a', 'b', 'c'];
