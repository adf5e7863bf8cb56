// Guards by name, with and without params; the same guard name with different params.
import { setup, assign } from 'xstate';

export const machine = setup({
  guards: {
    atLeast: ({ context }, params) => context.balance >= params.min,
    matchesCode: ({ event }, params) => event.code === params.code,
    covers: ({ context, event }, params) => context.balance >= event.amount + params.fee,
  },
}).createMachine({
  id: 'atm',
  context: { balance: 50 },
  initial: 'ready',
  states: {
    ready: {
      on: {
        WITHDRAW: [
          {
            guard: { type: 'covers', params: { fee: 0 } },
            actions: assign({ balance: ({ context, event }) => context.balance - event.amount }),
          },
          { target: 'refused' },
        ],
        BONUS: { guard: { type: 'matchesCode', params: { code: 'X1' } }, actions: assign({ balance: ({ context }) => context.balance + 100 }) },
        VIP: { guard: { type: 'atLeast', params: { min: 120 } }, target: 'vip' },
      },
    },
    refused: { on: { OK: 'ready' } },
    vip: {},
  },
});

export const events = [
  { type: 'WITHDRAW', amount: 20 },
  { type: 'WITHDRAW', amount: 40 },
  { type: 'OK' },
  { type: 'VIP' },
  { type: 'BONUS', code: 'nope' },
  { type: 'BONUS', code: 'X1' },
  { type: 'VIP' },
];
export const can = [{ type: 'VIP' }, { type: 'BONUS', code: 'X1' }, { type: 'BONUS', code: 'Y' }, { type: 'WITHDRAW', amount: 1000 }];
export const matches = ['ready', 'refused', 'vip'];
