// An exception in an action during transition propagates (transition throws); the caller keeps
// its previous snapshot. Also: sendTo a child that does not exist throws.
import { setup, assign, sendTo } from 'xstate';

export const machine = setup({}).createMachine({
  id: 'thrower',
  context: { n: 0 },
  initial: 'ok',
  states: {
    ok: {
      on: {
        INC: { actions: assign({ n: ({ context }) => context.n + 1 }) },
        EXPLODE: {
          target: 'never',
          actions: assign(({ event }) => {
            throw new Error(`exploded on ${event.type}`);
          }),
        },
        GUARD_THROWS: {
          target: 'never',
          guard: () => {
            throw new Error('guard blew up');
          },
        },
        SEND_NOWHERE: { actions: sendTo('ghost', { type: 'HELLO' }) },
      },
    },
    never: {},
  },
});

export const events = [
  { type: 'INC' },
  { type: 'EXPLODE' },
  { type: 'INC' },
  { type: 'GUARD_THROWS' },
  { type: 'SEND_NOWHERE' },
  { type: 'INC' },
];
export const can = [{ type: 'INC' }];
export const matches = ['ok', 'never'];
