// enqueueActions picks actions at run time (with check(guard)); the enqueued actions are what
// the pure API returns, in order, with assigns applied in sequence.
import { setup, enqueueActions } from 'xstate';

export const machine = setup({
  guards: { isLarge: ({ event }) => event.n > 10 },
  actions: { small: () => {}, large: () => {} },
}).createMachine({
  id: 'enq',
  context: { total: 0 },
  initial: 'on',
  states: {
    on: {
      on: {
        ADD: {
          actions: enqueueActions(({ context, event, enqueue, check }) => {
            enqueue.assign({ total: context.total + event.n });
            if (check('isLarge')) {
              enqueue({ type: 'large', params: { n: event.n } });
              enqueue.raise({ type: 'BIG' });
            } else {
              enqueue('small');
            }
            enqueue.emit({ type: 'added', n: event.n });
          }),
        },
        BIG: { actions: enqueueActions(({ enqueue }) => { enqueue.assign(({ context }) => ({ total: context.total * 2 })); }) },
      },
    },
  },
});

export const events = [{ type: 'ADD', n: 3 }, { type: 'ADD', n: 20 }, { type: 'ADD', n: 1 }];
export const can = [{ type: 'ADD', n: 1 }];
export const matches = ['on'];
