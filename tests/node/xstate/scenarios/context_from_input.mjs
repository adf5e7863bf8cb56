// The context factory receives the input; the input is not persisted separately.
import { setup, assign } from 'xstate';

export const machine = setup({}).createMachine({
  id: 'profile',
  context: ({ input }) => ({
    name: input.name,
    tags: [...input.tags, 'new'],
    limits: { max: input.max ?? 10 },
    ratio: input.ratio,
  }),
  initial: 'view',
  states: {
    view: { on: { RENAME: { actions: assign({ name: ({ event }) => event.name }) } } },
  },
});

export const input = { name: 'Ada', tags: ['x'], ratio: 0.25, extra: 'ignored' };
export const events = [{ type: 'RENAME', name: 'Grace' }];
export const can = [{ type: 'RENAME' }];
export const matches = ['view'];
