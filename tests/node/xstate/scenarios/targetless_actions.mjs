// Targetless transitions run actions without exiting or entering anything (no entry/exit actions).
import { setup, assign } from 'xstate';

export const machine = setup({
  actions: { onEnter: () => {}, onExit: () => {}, tally: () => {} },
}).createMachine({
  id: 'counter',
  context: { count: 0 },
  initial: 'active',
  states: {
    active: {
      entry: 'onEnter',
      exit: 'onExit',
      initial: 'inner',
      states: { inner: { on: { INNER: { actions: [assign({ count: ({ context }) => context.count + 100 }), 'tally'] } } } },
      on: {
        INC: { actions: [assign({ count: ({ context }) => context.count + 1 }), 'tally'] },
        DEC: { actions: assign({ count: ({ context }) => context.count - 1 }) },
        SET: { actions: assign({ count: ({ event }) => event.value }) },
      },
    },
  },
});

export const events = [
  { type: 'INC' },
  { type: 'INC' },
  { type: 'DEC' },
  { type: 'INNER' },
  { type: 'SET', value: 42 },
];
export const can = [{ type: 'INC' }, { type: 'SET', value: 1 }];
export const matches = [{ active: 'inner' }];
