// `after` with numeric delays: entering schedules delayed raises (id = event type); leaving
// cancels them (xstate.cancel); the after-event fed back fires the transition; a stale one (its
// state already left) is ignored.
import { setup, assign } from 'xstate';

export const machine = setup({}).createMachine({
  id: 'toast',
  context: { shown: 0 },
  initial: 'hidden',
  states: {
    hidden: { on: { SHOW: 'visible' } },
    visible: {
      entry: assign({ shown: ({ context }) => context.shown + 1 }),
      // (JS orders integer keys ascending whatever the source order: written ascending so the
      // Python twin's dict order is the same.)
      after: {
        1000: { target: '.faded', actions: assign({ shown: ({ context }) => context.shown + 10 }) },
        3000: 'hidden',
      },
      initial: 'bright',
      states: { bright: {}, faded: { after: { 500: '#toast.hidden' } } },
      on: { DISMISS: 'hidden' },
    },
  },
});

export const events = [
  { type: 'SHOW' },
  { type: 'xstate.after.1000.toast.visible' },
  { type: 'xstate.after.500.toast.visible.faded' },
  { type: 'xstate.after.3000.toast.visible' },
  { type: 'SHOW' },
  { type: 'DISMISS' },
  { type: 'xstate.after.1000.toast.visible' },
  { type: 'SHOW' },
  { type: 'xstate.after.3000.toast.visible' },
];
export const can = [{ type: 'xstate.after.3000.toast.visible' }, { type: 'DISMISS' }];
export const matches = ['hidden', { visible: 'faded' }];
