// Timers in parallel regions: leaving one region's state cancels only its timers; an after
// transition in one region leaves the other region's timer running; stale timers are ignored.
import { setup, assign } from 'xstate';

export const machine = setup({}).createMachine({
  id: 'timers',
  context: { fired: [] },
  type: 'parallel',
  states: {
    blink: {
      initial: 'on',
      states: {
        on: { after: { 500: { target: 'off', actions: assign({ fired: ({ context }) => [...context.fired, 'blink off'] }) } } },
        off: { after: { 500: 'on' }, on: { FREEZE: 'frozen' } },
        frozen: { on: { THAW: 'on' } },
      },
    },
    session: {
      initial: 'active',
      states: {
        active: { after: { 60000: 'expired' }, on: { TOUCH: { target: 'active', reenter: true } } },
        expired: { type: 'final' },
      },
    },
  },
});

export const events = [
  { type: 'xstate.after.500.timers.blink.on' },
  { type: 'FREEZE' },
  { type: 'xstate.after.500.timers.blink.off' },
  { type: 'TOUCH' },
  { type: 'THAW' },
  { type: 'xstate.after.500.timers.blink.on' },
  { type: 'xstate.after.60000.timers.session.active' },
  { type: 'xstate.after.60000.timers.session.active' },
];
export const can = [{ type: 'TOUCH' }, { type: 'xstate.after.500.timers.blink.off' }];
export const matches = [{ blink: 'frozen' }, { session: 'expired' }];
