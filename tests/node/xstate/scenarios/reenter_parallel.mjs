// Self-transitions on a parallel state: default keeps the regions' states, reenter resets them
// (regions exit and enter again); a targetless transition on the parallel state changes nothing.
import { setup, assign } from 'xstate';

const count = (key) => assign({ [key]: ({ context }) => context[key] + 1 });
export const machine = setup({}).createMachine({
  id: 'rp',
  context: { enter: 0, exit: 0, regionEnter: 0 },
  initial: 'par',
  states: {
    par: {
      type: 'parallel',
      entry: count('enter'),
      exit: count('exit'),
      on: {
        SELF: { target: 'par' },
        SELF_REENTER: { target: 'par', reenter: true },
        NOTHING: { actions: count('regionEnter') },
      },
      states: {
        a: { initial: 'a1', entry: count('regionEnter'), states: { a1: { on: { A: 'a2' } }, a2: {} } },
        b: { initial: 'b1', states: { b1: { on: { B: 'b2' } }, b2: {} } },
      },
    },
  },
});

export const events = [
  { type: 'A' },
  { type: 'B' },
  { type: 'SELF' },
  { type: 'A' },
  { type: 'B' },
  { type: 'SELF_REENTER' },
  { type: 'NOTHING' },
];
export const can = [{ type: 'A' }, { type: 'SELF' }];
export const matches = [{ par: { a: 'a2', b: 'b2' } }, { par: { a: 'a1' } }];
