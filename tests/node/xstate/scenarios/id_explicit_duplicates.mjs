// Two states with the same explicit id are not an error in XState: the later one takes the id
// in its id map, so '#dup' and '#dup.d' (targets) and stateIn('#dup.d') mean the region
// `second`; `first` still works by path. A node's `order` is the id map's size when it
// registers, so after a collision two nodes share an order (second and second.c): entry and
// exit order (the trail) must still match XState's.
import { assign, createMachine, stateIn } from 'xstate';

const push = (tag) => assign({ trail: ({ context }) => [...context.trail, tag] });
const leaf = (name, extra = {}) => ({ entry: push(`enter ${name}`), exit: push(`exit ${name}`), ...extra });

export const machine = createMachine({
  id: 'm',
  context: { trail: [] },
  initial: 'idle',
  states: {
    idle: { on: { TO_DUP: '#dup', TO_FIRST_B: 'p.first.b', TO_D: '#dup.d' } },
    p: {
      type: 'parallel',
      on: { OUT: 'idle' },
      states: {
        first: leaf('first', { id: 'dup', initial: 'a', states: { a: leaf('first.a', { on: { NEXT: 'b' } }), b: leaf('first.b') } }),
        second: leaf('second', { id: 'dup', initial: 'c', states: { c: leaf('second.c'), d: leaf('second.d') } }),
        third: leaf('third', {
          initial: 'e',
          states: {
            e: leaf('third.e', { on: { JUMP: '#dup.d', CHECK: { guard: stateIn('#dup.d'), target: 'f' } } }),
            f: leaf('third.f'),
          },
        }),
      },
    },
  },
});

export const events = [
  { type: 'TO_DUP' },
  { type: 'CHECK' },
  { type: 'NEXT' },
  { type: 'JUMP' },
  { type: 'CHECK' },
  { type: 'OUT' },
  { type: 'TO_FIRST_B' },
  { type: 'OUT' },
  { type: 'TO_D' },
];
export const can = [{ type: 'CHECK' }, { type: 'JUMP' }, { type: 'NEXT' }];
export const matches = [{ p: { second: 'd' } }, { p: { first: 'b' } }, { p: { third: 'f' } }];
