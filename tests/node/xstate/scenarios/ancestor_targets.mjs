// Transitions from a descendant to an ancestor (by #id and by .child paths), with and without
// reenter, and from inside a parallel region to the parallel state itself.
import { setup, assign } from 'xstate';

const count = (key) => assign({ [key]: ({ context }) => context[key] + 1 });
export const machine = setup({ actions: { ping: () => {} } }).createMachine({
  id: 'anc',
  context: { enterP: 0, exitP: 0, enterPar: 0, exitPar: 0 },
  initial: 'p',
  states: {
    p: {
      id: 'P',
      entry: count('enterP'),
      exit: count('exitP'),
      initial: 'c1',
      states: {
        c1: { on: { NEXT: 'c2' } },
        c2: {
          entry: 'ping',
          on: {
            UP: '#P',
            UP_REENTER: { target: '#P', reenter: true },
            ROOT: '#anc',
            PAR: '#anc.par',
          },
        },
      },
    },
    par: {
      type: 'parallel',
      entry: count('enterPar'),
      exit: count('exitPar'),
      states: {
        r1: { initial: 'x', states: { x: { on: { MOVE: 'y' } }, y: { on: { TOP: '#anc.par', TOP_REENTER: { target: '#anc.par', reenter: true } } } } },
        r2: { initial: 'u', states: { u: { on: { MOVE: 'v' } }, v: {} } },
      },
    },
  },
});

export const events = [
  { type: 'NEXT' },
  { type: 'UP' },
  { type: 'NEXT' },
  { type: 'UP_REENTER' },
  { type: 'NEXT' },
  { type: 'ROOT' },
  { type: 'NEXT' },
  { type: 'PAR' },
  { type: 'MOVE' },
  { type: 'TOP' },
  { type: 'MOVE' },
  { type: 'TOP_REENTER' },
];
export const can = [{ type: 'UP' }, { type: 'TOP' }];
export const matches = [{ p: 'c2' }, { par: { r1: 'y', r2: 'v' } }];
