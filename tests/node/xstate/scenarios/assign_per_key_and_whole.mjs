// assign with per-key updaters and values, and with one function returning a partial context;
// consecutive assigns see each other's results; keys not mentioned are kept.
import { setup, assign } from 'xstate';

export const machine = setup({
  actions: {
    addItem: assign({ items: ({ context, event }) => [...context.items, event.item], count: ({ context }) => context.count + 1 }),
    rename: assign(({ context, event }) => ({ name: `${event.name}#${context.count}` })),
    bump: assign({ count: ({ context }, params) => context.count + params.by }),
  },
}).createMachine({
  id: 'cart',
  context: { items: [], count: 0, name: 'cart', meta: { nested: { ok: true } } },
  initial: 'open',
  states: {
    open: {
      on: {
        ADD: { actions: 'addItem' },
        RENAME: { actions: ['rename', { type: 'bump', params: { by: 10 } }, 'rename'] },
        CLEAR: { actions: assign({ items: [], count: 0 }) },
        META: { actions: assign({ meta: ({ context }) => ({ ...context.meta, touched: context.count }) }) },
      },
    },
  },
});

export const events = [
  { type: 'ADD', item: { sku: 'a', qty: 1 } },
  { type: 'ADD', item: { sku: 'b', qty: 2.5 } },
  { type: 'RENAME', name: 'mine' },
  { type: 'META' },
  { type: 'CLEAR' },
];
export const can = [{ type: 'CLEAR' }];
export const matches = ['open'];
