// After status "done", XState's pure transition is fed more events: pinned as XState behaves.
import { setup, assign } from 'xstate';

export const machine = setup({ actions: { late: () => {} } }).createMachine({
  id: 'once',
  context: { n: 0 },
  initial: 'go',
  states: {
    go: { on: { FINISH: 'end' } },
    end: {
      type: 'final',
      on: { POKE: { actions: ['late', assign({ n: ({ context }) => context.n + 1 })] } },
    },
  },
  on: { ANY: { actions: assign({ n: ({ context }) => context.n + 10 }) } },
  output: ({ context }) => context.n,
});

export const events = [{ type: 'ANY' }, { type: 'FINISH' }, { type: 'POKE' }, { type: 'ANY' }, { type: 'FINISH' }];
export const can = [{ type: 'POKE' }, { type: 'ANY' }, { type: 'FINISH' }];
export const matches = ['end'];
