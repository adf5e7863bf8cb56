// Issue 26: XState 5.33.3 accepts a `type: 'final'` state that declares `initial` and child
// states. Entering it never enters the children (a final state is atomic), but on a default
// entry its `initial` actions run; a transition can still target a child directly (XState then
// has the child active under the final state: its tags show and its transitions are selected).
import { setup } from 'xstate';

export const machine = setup({ actions: { marked: () => {}, announce: () => {} } }).createMachine({
  id: 'game',
  initial: 'play',
  states: {
    play: {
      initial: 'a',
      states: {
        a: { on: { WIN: 'won', DEEP: 'won.y' } },
        won: {
          type: 'final',
          initial: { target: 'x', actions: [{ type: 'announce', params: { where: 'won initial' } }] },
          entry: { type: 'marked', params: { where: 'won entry' } },
          output: { prize: 1 },
          states: { x: { entry: { type: 'marked', params: { where: 'x entry' } } }, y: { tags: ['inside-final'] } },
        },
      },
      onDone: 'debrief',
    },
    debrief: { on: { AGAIN: 'play', REGION: 'rooms' } },
    rooms: {
      type: 'parallel',
      states: {
        r1: {
          initial: 'a',
          states: {
            a: { on: { DEEP: 'f.y', SHALLOW: 'f' } },
            f: { type: 'final', initial: 'x', states: { x: {}, y: { tags: ['inside-final'], on: { Z: 'x' } } } },
          },
        },
        r2: { initial: 'c', states: { c: { on: { END: 'g' } }, g: { type: 'final' } } },
      },
      onDone: 'debrief',
    },
  },
});

export const events = [
  { type: 'WIN' },
  { type: 'AGAIN' },
  { type: 'DEEP' },
  { type: 'REGION' },
  { type: 'DEEP' },
  { type: 'Z' },
  { type: 'END' },
  { type: 'REGION' },
  { type: 'SHALLOW' },
  { type: 'END' },
];
export const can = [{ type: 'Z' }, { type: 'DEEP' }];
export const matches = [{ rooms: { r1: 'f' } }, 'debrief'];
