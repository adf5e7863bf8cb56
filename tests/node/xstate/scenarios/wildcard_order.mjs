// Declaration order against wildcard: `*` and `prefix.*` declared before exact descriptors.
import { setup, assign } from 'xstate';

const note = (tag) => assign({ log: ({ context, event }) => [...context.log, `${tag}:${event.type}`] });
export const machine = setup({}).createMachine({
  id: 'order',
  context: { log: [] },
  initial: 's',
  states: {
    s: {
      on: {
        '*': { actions: note('star') },
        'a.*': { actions: note('a.*') },
        'a.b.*': { actions: note('a.b.*') },
        'a.b': { actions: note('exact a.b') },
        X: [{ guard: ({ event }) => event.ok === true, actions: note('X ok') }],
      },
    },
  },
});

export const events = [
  { type: 'a.b' },
  { type: 'a.b.c' },
  { type: 'a.c' },
  { type: 'X', ok: false },
  { type: 'X', ok: true },
  { type: 'zzz' },
];
export const can = [{ type: 'X', ok: false }, { type: 'a' }];
export const matches = ['s'];
