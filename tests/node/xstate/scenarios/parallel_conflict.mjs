// Two regions handle the same event with conflicting targets: the first in document order wins,
// the conflicting one is dropped; non-conflicting ones in other regions still run.
import { setup, assign } from 'xstate';

const note = (what) => assign({ log: ({ context }) => [...context.log, what] });
export const machine = setup({}).createMachine({
  id: 'conflict',
  context: { log: [] },
  initial: 'p',
  states: {
    p: {
      type: 'parallel',
      states: {
        r1: {
          initial: 'a',
          states: {
            a: { on: { E: { target: '#conflict.out1', actions: note('r1 to out1') }, F: { target: 'b', actions: note('r1 a->b') } } },
            b: {},
          },
        },
        r2: {
          initial: 'x',
          states: {
            x: { on: { E: { target: '#conflict.out2', actions: note('r2 to out2') }, F: { target: '#conflict.out2', actions: note('r2 to out2') } } },
          },
        },
        r3: {
          initial: 'm',
          states: { m: { on: { E: { actions: note('r3 targetless') }, F: { target: 'n', actions: note('r3 m->n') } } }, n: {} },
        },
      },
    },
    out1: { on: { BACK: 'p' } },
    out2: { on: { BACK: 'p' } },
  },
});

export const events = [{ type: 'E' }, { type: 'BACK' }, { type: 'F' }, { type: 'BACK' }];
export const can = [{ type: 'E' }, { type: 'F' }];
export const matches = ['out1', 'out2', { p: { r1: 'b' } }];
