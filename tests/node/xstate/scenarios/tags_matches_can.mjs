// Tags gathered from every active node; matches on nested parallel values; can with guards.
import { setup, assign } from 'xstate';

export const machine = setup({
  guards: { hasItems: ({ context }) => context.items > 0 },
}).createMachine({
  id: 'shop',
  context: { items: 0 },
  initial: 'browsing',
  tags: ['app'],
  states: {
    browsing: {
      tags: ['public'],
      on: {
        ADD: { actions: assign({ items: ({ context }) => context.items + 1 }) },
        CHECKOUT: { guard: 'hasItems', target: 'checkout' },
      },
    },
    checkout: {
      type: 'parallel',
      tags: ['busy', 'secure'],
      states: {
        payment: { initial: 'card', states: { card: { tags: ['card', 'busy'], on: { PAID: 'paid' } }, paid: { type: 'final' } } },
        shipping: { initial: 'address', states: { address: { on: { SHIPPED: 'set' } }, set: { tags: 'shipped', type: 'final' } } },
      },
      onDone: 'thanks',
    },
    thanks: { type: 'final', tags: ['public', 'done'] },
  },
});

export const events = [
  { type: 'CHECKOUT' },
  { type: 'ADD' },
  { type: 'CHECKOUT' },
  { type: 'PAID' },
  { type: 'SHIPPED' },
];
export const can = [{ type: 'CHECKOUT' }, { type: 'PAID' }, { type: 'ADD' }, { type: 'NOPE' }];
export const matches = [
  'browsing',
  'checkout',
  { checkout: { payment: 'card' } },
  { checkout: { payment: 'paid', shipping: 'address' } },
  'thanks',
];
