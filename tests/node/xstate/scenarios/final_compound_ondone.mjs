// A compound reaching its final child raises xstate.done.state.<id>, taken by the parent's onDone.
import { setup, assign } from 'xstate';

export const machine = setup({
  actions: { finished: () => {} },
}).createMachine({
  id: 'form',
  context: { doneEvents: [] },
  initial: 'editing',
  states: {
    editing: {
      initial: 'name',
      states: {
        name: { on: { NEXT: 'email' } },
        email: { on: { NEXT: 'complete' } },
        complete: { type: 'final', entry: 'finished' },
      },
      onDone: {
        target: 'review',
        actions: assign({ doneEvents: ({ context, event }) => [...context.doneEvents, event.type] }),
      },
    },
    review: { on: { EDIT: 'editing' } },
  },
});

export const events = [
  { type: 'NEXT' },
  { type: 'NEXT' },
  { type: 'NEXT' },
  { type: 'EDIT' },
  { type: 'NEXT' },
  { type: 'NEXT' },
];
export const can = [{ type: 'NEXT' }, { type: 'EDIT' }];
export const matches = ['review', { editing: 'email' }];
