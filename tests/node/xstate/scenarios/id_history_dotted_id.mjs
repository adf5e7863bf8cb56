// A history record names its state by id, and XState's restoreSnapshot reads that id back with
// getStateNodeById, which splits it on its dots: the remembered state with the custom id
// 'deep.b' is looked up as id 'deep' (there is none), so XState drops the record and a
// restored snapshot takes the history default ('a'), while the live one returns to 'b'.
import { createMachine } from 'xstate';

export const machine = createMachine({
  id: 'h',
  initial: 'p',
  states: {
    p: {
      initial: 'a',
      states: { a: { on: { NEXT: 'b' } }, b: { id: 'deep.b' }, hist: { type: 'history' } },
      on: { OUT: 'q' },
    },
    q: { on: { BACK: 'p.hist' } },
  },
});

export const events = [{ type: 'NEXT' }, { type: 'OUT' }, { type: 'BACK' }];
export const matches = [{ p: 'b' }];
