// Three levels deep: a transition across branches exits inner-first, enters outer-first.
import { setup } from 'xstate';

const a = (name) => [name, () => {}];
export const machine = setup({
  actions: Object.fromEntries(
    ['A', 'A1', 'A1x', 'A1y', 'A2', 'B', 'B1', 'B1x'].flatMap((s) => [a(`in${s}`), a(`out${s}`)]),
  ),
}).createMachine({
  id: 'deep',
  initial: 'A',
  states: {
    A: {
      entry: 'inA', exit: 'outA', initial: 'A1',
      states: {
        A1: {
          entry: 'inA1', exit: 'outA1', initial: 'A1x',
          states: {
            A1x: { entry: 'inA1x', exit: 'outA1x', on: { SIDE: 'A1y' } },
            A1y: { entry: 'inA1y', exit: 'outA1y', on: { CROSS: '#deep.B.B1.B1x' } },
          },
          on: { SIBLING: 'A2' },
        },
        A2: { entry: 'inA2', exit: 'outA2' },
      },
    },
    B: {
      entry: 'inB', exit: 'outB', initial: 'B1',
      states: {
        B1: { entry: 'inB1', exit: 'outB1', initial: 'B1x', states: { B1x: { entry: 'inB1x', exit: 'outB1x' } } },
      },
      on: { HOME: 'A' },
    },
  },
});

export const events = [
  { type: 'SIDE' },
  { type: 'CROSS' },
  { type: 'HOME' },
  { type: 'SIBLING' },
  { type: 'SIDE' },
];
export const can = [{ type: 'SIDE' }, { type: 'CROSS' }, { type: 'HOME' }];
export const matches = [{ A: { A1: 'A1y' } }, { A: 'A1' }, 'B', { B: { B1: 'B1x' } }];
