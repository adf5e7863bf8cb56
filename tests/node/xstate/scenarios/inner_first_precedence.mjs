// Inner states take precedence: a child's handler shadows its ancestors' for the same event,
// unless the child's guard fails, then the parent's handler is tried.
import { setup, assign } from 'xstate';

export const machine = setup({
  guards: { allowed: ({ context }) => context.allowed },
  actions: { parentHandled: () => {}, childHandled: () => {} },
}).createMachine({
  id: 'prec',
  context: { allowed: true },
  initial: 'outer',
  states: {
    outer: {
      initial: 'inner',
      on: { GO: { target: 'elsewhere', actions: 'parentHandled' }, TOGGLE: { actions: assign({ allowed: ({ context }) => !context.allowed }) } },
      states: {
        inner: { on: { GO: { guard: 'allowed', target: 'inner2', actions: 'childHandled' } } },
        inner2: { on: { GO: { guard: 'allowed', target: 'inner', actions: 'childHandled' } } },
      },
    },
    elsewhere: { on: { GO: 'outer' } },
  },
  on: { GO: { actions: 'parentHandled' } },
});

export const events = [
  { type: 'GO' },
  { type: 'GO' },
  { type: 'TOGGLE' },
  { type: 'GO' },
  { type: 'GO' },
];
export const can = [{ type: 'GO' }, { type: 'TOGGLE' }];
export const matches = [{ outer: 'inner' }, { outer: 'inner2' }, 'elsewhere'];
