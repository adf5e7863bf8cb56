// enqueueActions enqueuing every built-in kind, guarded with check() on a guard with params.
import { setup, enqueueActions, fromPromise } from 'xstate';

export const machine = setup({
  actors: { helper: fromPromise(async () => 'h') },
  guards: { over: ({ context }, params) => context.n > params.limit },
  actions: { custom: () => {} },
}).createMachine({
  id: 'ek',
  context: { n: 0 },
  initial: 'on',
  states: {
    on: {
      on: {
        GO: {
          actions: enqueueActions(({ context, event, enqueue, check }) => {
            enqueue.assign({ n: context.n + event.by });
            enqueue.spawnChild('helper', { id: `h${event.by}`, input: { by: event.by } });
            enqueue.sendTo(`h${event.by}`, { type: 'PING' });
            enqueue.raise({ type: 'LATER' }, { delay: 50, id: 'later' });
            if (check({ type: 'over', params: { limit: 2 } })) {
              enqueue.cancel('later');
              enqueue.stopChild('h1');
              enqueue.emit({ type: 'overflow' });
            }
            enqueue({ type: 'custom', params: { by: event.by } });
          }),
        },
      },
    },
  },
});

export const events = [{ type: 'GO', by: 1 }, { type: 'GO', by: 2 }, { type: 'GO', by: 5 }];
export const can = [{ type: 'GO', by: 0 }];
export const matches = ['on'];
