// Action order across levels: exits inner-first (each state's exit in array order), then the
// transition's actions, then entries outer-first; assign sees the context as updated so far.
import { setup, assign } from 'xstate';

const push = (tag) => assign({ trail: ({ context }) => [...context.trail, tag] });
export const machine = setup({
  actions: { mark: () => {} },
}).createMachine({
  id: 'order',
  context: { trail: [] },
  initial: 'a',
  states: {
    a: {
      exit: [push('exit a'), { type: 'mark', params: { at: 'exit a' } }],
      initial: 'a1',
      states: {
        a1: {
          exit: [push('exit a1'), { type: 'mark', params: { at: 'exit a1' } }],
          initial: 'a11',
          states: {
            a11: {
              exit: [push('exit a11'), { type: 'mark', params: { at: 'exit a11' } }],
              on: {
                GO: {
                  target: '#order.b.b1.b11',
                  actions: [push('transition 1'), { type: 'mark', params: { at: 'transition' } }, push('transition 2')],
                },
              },
            },
          },
        },
      },
    },
    b: {
      entry: [push('entry b'), { type: 'mark', params: { at: 'entry b' } }],
      initial: 'b1',
      states: {
        b1: {
          entry: [push('entry b1'), { type: 'mark', params: { at: 'entry b1' } }],
          initial: 'b10',
          states: {
            b10: {},
            b11: { entry: [push('entry b11'), { type: 'mark', params: { at: 'entry b11', n: 11 } }] },
          },
        },
      },
      on: { AGAIN: { target: 'a', actions: push('to a') } },
    },
  },
});

export const events = [{ type: 'GO' }, { type: 'AGAIN' }, { type: 'GO' }];
export const can = [{ type: 'GO' }];
export const matches = [{ b: { b1: 'b11' } }];
