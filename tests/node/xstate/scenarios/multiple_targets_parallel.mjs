// One transition with several targets ({ target: [...] }), one per parallel region, from outside and inside the parallel.
import { setup } from 'xstate';

const noop = () => {};
export const machine = setup({ actions: { inA2: noop, inB3: noop, outPar: noop } }).createMachine({
  id: 'multi',
  initial: 'idle',
  states: {
    idle: {
      on: {
        JUMP: { target: ['#multi.par.a.a2', '#multi.par.b.b3'] },
        // An array of strings is a list of candidate transitions, not multiple targets: first wins.
        CANDIDATES: ['#multi.par.b.b3', '#multi.par.a.a2'],
        ENTER: 'par',
      },
    },
    par: {
      type: 'parallel',
      exit: 'outPar',
      on: { RESET_BOTH: { target: ['.a.a1', '.b.b1'] }, LEAVE: 'idle' },
      states: {
        a: { initial: 'a1', states: { a1: {}, a2: { entry: 'inA2' } } },
        b: {
          initial: 'b1',
          states: { b1: { on: { SHIFT: { target: ['#multi.par.a.a2', '#multi.par.b.b2'] } } }, b2: {}, b3: { entry: 'inB3' } },
        },
      },
    },
  },
});

export const events = [
  { type: 'JUMP' },
  { type: 'RESET_BOTH' },
  { type: 'SHIFT' },
  { type: 'LEAVE' },
  { type: 'ENTER' },
  { type: 'SHIFT' },
  { type: 'LEAVE' },
  { type: 'CANDIDATES' },
];
export const can = [{ type: 'SHIFT' }, { type: 'JUMP' }];
export const matches = [{ par: { a: 'a2', b: 'b3' } }, { par: { b: 'b2' } }, 'idle'];
