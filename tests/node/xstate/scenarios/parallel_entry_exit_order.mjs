// Entering a parallel state enters regions in document order (each region parent-first);
// leaving it exits in reverse document order (children first). Always in a region fires in
// the same macrostep as another region's transition.
import { setup, assign } from 'xstate';

const push = (tag) => assign({ trail: ({ context }) => [...context.trail, tag] });
export const machine = setup({ actions: { mark: () => {} } }).createMachine({
  id: 'po',
  context: { trail: [] },
  initial: 'off',
  states: {
    off: { on: { ON: 'on' } },
    on: {
      type: 'parallel',
      entry: push('enter on'),
      exit: push('exit on'),
      on: { OFF: 'off' },
      states: {
        r1: {
          entry: push('enter r1'),
          exit: push('exit r1'),
          initial: 'a',
          states: {
            a: { entry: [push('enter r1.a'), { type: 'mark', params: { s: 'r1.a' } }], exit: push('exit r1.a'), on: { STEP: 'b' } },
            b: { entry: push('enter r1.b'), exit: push('exit r1.b') },
          },
        },
        r2: {
          entry: push('enter r2'),
          exit: push('exit r2'),
          initial: 'c',
          states: {
            c: { entry: [push('enter r2.c'), { type: 'mark', params: { s: 'r2.c' } }], exit: push('exit r2.c'), always: { guard: ({ context }) => context.trail.includes('enter r1.b'), target: 'd' } },
            d: { entry: push('enter r2.d'), exit: push('exit r2.d') },
          },
        },
        r3: {
          entry: push('enter r3'),
          exit: push('exit r3'),
          initial: 'e',
          states: { e: { entry: push('enter r3.e'), exit: push('exit r3.e'), on: { STEP: 'f' } }, f: { entry: push('enter r3.f'), exit: push('exit r3.f') } },
        },
      },
    },
  },
});

export const events = [{ type: 'ON' }, { type: 'STEP' }, { type: 'OFF' }];
export const can = [{ type: 'STEP' }];
export const matches = [{ on: { r2: 'd' } }];
