// Three regions, one of them nested compound; a shared event moves all regions in document order.
import { setup, assign } from 'xstate';

export const machine = setup({
  actions: {
    note: assign({ log: ({ context }, params) => [...context.log, params.what] }),
  },
}).createMachine({
  id: 'tri',
  context: { log: [] },
  initial: 'run',
  states: {
    run: {
      type: 'parallel',
      on: { STOP: 'stopped' },
      states: {
        r1: {
          initial: 'a',
          states: {
            a: { on: { TICK: { target: 'b', actions: { type: 'note', params: { what: 'r1 a->b' } } } } },
            b: { on: { TICK: { target: 'a', actions: { type: 'note', params: { what: 'r1 b->a' } } } } },
          },
        },
        r2: {
          initial: 'x',
          states: {
            x: { on: { TICK: { target: 'y', actions: { type: 'note', params: { what: 'r2 x->y' } } } } },
            y: {
              initial: 'y1',
              states: {
                y1: { on: { TICK: { target: 'y2', actions: { type: 'note', params: { what: 'r2 y1->y2' } } } } },
                y2: {},
              },
            },
          },
        },
        r3: {
          initial: 'p',
          states: {
            p: { on: { TOCK: 'q' } },
            q: { exit: { type: 'note', params: { what: 'r3 exit q' } } },
          },
        },
      },
    },
    stopped: { on: { START: 'run' } },
  },
});

export const events = [
  { type: 'TICK' },
  { type: 'TOCK' },
  { type: 'TICK' },
  { type: 'TICK' },
  { type: 'STOP' },
  { type: 'START' },
];
export const can = [{ type: 'TICK' }, { type: 'TOCK' }, { type: 'START' }];
export const matches = [{ run: { r2: 'y' } }, { run: { r2: { y: 'y2' } } }, 'stopped'];
