// History defaults that point deep (`target: 'b.b2'`), for shallow and deep history, used before
// anything is remembered; then remembered values win.
import { setup } from 'xstate';

export const machine = setup({}).createMachine({
  id: 'hd',
  initial: 'out',
  states: {
    out: { on: { IN_SHALLOW: 'box.hs', IN_DEEP: 'box.hd' } },
    box: {
      initial: 'a',
      on: { OUT: 'out' },
      states: {
        a: { on: { B: 'b' } },
        b: { initial: 'b1', states: { b1: { on: { N: 'b2' } }, b2: { on: { N: 'b3' } }, b3: {} } },
        hs: { type: 'history', target: 'b.b2' },
        hd: { type: 'history', history: 'deep', target: 'b.b3' },
      },
    },
  },
});

export const events = [
  { type: 'IN_SHALLOW' },
  { type: 'OUT' },
  { type: 'IN_DEEP' },
  { type: 'OUT' },
  { type: 'IN_SHALLOW' },
  { type: 'N' },
  { type: 'OUT' },
  { type: 'IN_DEEP' },
];
export const can = [{ type: 'N' }];
export const matches = [{ box: { b: 'b2' } }, { box: { b: 'b3' } }];
