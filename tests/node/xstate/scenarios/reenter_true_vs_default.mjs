// Self-transitions: default (no reenter) keeps the state; `reenter: true` exits and re-enters it.
// Also a transition to a child: default does not exit the parent; reenter does.
import { setup, assign } from 'xstate';

export const machine = setup({
  actions: {
    enterBox: assign({ entered: ({ context }) => context.entered + 1 }),
    exitBox: assign({ exited: ({ context }) => context.exited + 1 }),
    markEnter: () => {},
    markExit: () => {},
  },
}).createMachine({
  id: 'box',
  context: { entered: 0, exited: 0 },
  initial: 'box',
  states: {
    box: {
      entry: ['enterBox', 'markEnter'],
      exit: ['exitBox', 'markExit'],
      initial: 'one',
      states: { one: { entry: 'markEnter', exit: 'markExit' }, two: {} },
      on: {
        SELF: { target: 'box' },
        SELF_REENTER: { target: 'box', reenter: true },
        CHILD_TWO: { target: '.two' },
        CHILD_TWO_REENTER: { target: '.two', reenter: true },
        CHILD_ONE: { target: '.one' },
        STAY: { actions: 'markEnter' },
      },
    },
  },
});

export const events = [
  { type: 'SELF' },
  { type: 'SELF_REENTER' },
  { type: 'CHILD_TWO' },
  { type: 'SELF' },
  { type: 'CHILD_TWO_REENTER' },
  { type: 'CHILD_ONE' },
  { type: 'STAY' },
];
export const can = [{ type: 'SELF' }];
export const matches = [{ box: 'one' }, { box: 'two' }];
