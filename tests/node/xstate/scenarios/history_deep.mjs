// Deep history restores the whole remembered subtree; shallow beside it only the first level.
import { setup } from 'xstate';

export const machine = setup({}).createMachine({
  id: 'doc',
  initial: 'edit',
  states: {
    edit: {
      initial: 'text',
      states: {
        text: {
          initial: 'plain',
          states: { plain: { on: { STYLE: 'styled' } }, styled: { initial: 's1', states: { s1: { on: { MORE: 's2' } }, s2: {} } } },
        },
        image: {},
        deepHist: { type: 'history', history: 'deep' },
        shallowHist: { type: 'history', history: 'shallow' },
      },
      on: { SAVE: 'saving', IMAGE: '.image' },
    },
    saving: { on: { BACK_DEEP: 'edit.deepHist', BACK_SHALLOW: 'edit.shallowHist' } },
  },
});

export const events = [
  { type: 'STYLE' },
  { type: 'MORE' },
  { type: 'SAVE' },
  { type: 'BACK_DEEP' },
  { type: 'SAVE' },
  { type: 'BACK_SHALLOW' },
  { type: 'IMAGE' },
  { type: 'SAVE' },
  { type: 'BACK_DEEP' },
];
export const can = [{ type: 'MORE' }, { type: 'STYLE' }];
export const matches = [{ edit: { text: { styled: 's2' } } }, { edit: { text: 'plain' } }, { edit: 'image' }];
