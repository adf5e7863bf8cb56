// Conflicts between a region's own transition and an ancestor's transition reached from another
// region (which does not handle the event itself); `always` on a parallel state and on the root.
import { setup, assign } from 'xstate';

const note = (tag) => assign({ log: ({ context, event }) => [...context.log, `${tag}:${event.type}`] });
export const machine = setup({}).createMachine({
  id: 'anc',
  context: { log: [], n: 0 },
  initial: 'outer',
  always: { guard: ({ context }) => context.n === 3, actions: [note('root always'), assign({ n: 4 })] },
  states: {
    outer: {
      initial: 'par',
      on: {
        E: { target: '.away', actions: note('outer E') },
        F: { target: '.away', actions: note('outer F') },
        G: { actions: note('outer G targetless') },
      },
      states: {
        par: {
          type: 'parallel',
          always: { guard: ({ context }) => context.n === 1, actions: [note('par always'), assign({ n: 2 })] },
          states: {
            r1: {
              initial: 'a',
              states: {
                a: { on: { E: { target: 'b', actions: note('r1 E') }, G: { target: 'b', actions: note('r1 G') } } },
                b: { on: { BUMP: { actions: assign({ n: ({ context }) => context.n + 1 }) } } },
              },
            },
            r2: {
              initial: 'x',
              states: {
                x: { on: { F: { target: 'y', actions: note('r2 F') } } },
                y: {},
              },
            },
          },
        },
        away: { on: { BACK: 'par' } },
      },
    },
  },
});

export const events = [
  { type: 'E' },
  { type: 'BACK' },
  { type: 'F' },
  { type: 'BACK' },
  { type: 'G' },
  { type: 'BUMP' },
  { type: 'BUMP' },
  { type: 'BUMP' },
  { type: 'E' },
  { type: 'BACK' },
  { type: 'G' },
];
export const can = [{ type: 'E' }, { type: 'G' }];
export const matches = [{ outer: 'away' }, { outer: { par: { r1: 'b' } } }];
