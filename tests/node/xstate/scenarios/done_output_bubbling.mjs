// Final-state `output` becomes the done.state event's output; done events bubble level by level
// (a region's compound is done -> the parallel is done -> the outer compound is done), custom ids
// name the events.
import { setup, assign } from 'xstate';

const push = (tag) => assign({ log: ({ context, event }) => [...context.log, `${tag}|${event.type}|${JSON.stringify(event.output ?? null)}`] });
export const machine = setup({}).createMachine({
  id: 'bubble',
  context: { log: [], score: 5 },
  initial: 'outer',
  states: {
    outer: {
      id: 'outerBox',
      initial: 'par',
      states: {
        par: {
          type: 'parallel',
          states: {
            left: {
              initial: 'work',
              states: {
                work: { on: { L: 'fin' } },
                fin: { type: 'final', output: ({ context }) => ({ side: 'left', score: context.score }) },
              },
              onDone: { actions: push('left onDone') },
            },
            right: {
              id: 'rightRegion',
              initial: 'work',
              states: {
                work: { on: { R: 'fin' } },
                fin: { type: 'final', output: { side: 'right' } },
              },
              onDone: { actions: push('right onDone') },
            },
          },
          onDone: { target: 'last', actions: push('par onDone') },
        },
        last: { type: 'final', output: ({ event }) => ({ from: event.type }) },
      },
      onDone: { target: 'after', actions: push('outer onDone') },
    },
    after: { on: { AGAIN: 'outer' } },
  },
});

export const events = [{ type: 'R' }, { type: 'L' }, { type: 'AGAIN' }, { type: 'L' }, { type: 'R' }];
export const can = [{ type: 'L' }, { type: 'AGAIN' }];
export const matches = ['after', { outer: { par: { right: 'fin' } } }];
