// A parallel state with two regions: each region moves on its own events; both see shared ones.
import { setup } from 'xstate';

const noop = () => {};
export const machine = setup({
  actions: { boldOn: noop, boldOff: noop, listOn: noop, listOff: noop, enterEditor: noop },
}).createMachine({
  id: 'editor',
  type: 'parallel',
  entry: 'enterEditor',
  states: {
    bold: {
      initial: 'off',
      states: {
        off: { on: { BOLD: 'on', RESET: 'off' } },
        on: { entry: 'boldOn', exit: 'boldOff', on: { BOLD: 'off', RESET: 'off' } },
      },
    },
    list: {
      initial: 'none',
      states: {
        none: { on: { BULLETS: 'bullets', NUMBERS: 'numbers' } },
        bullets: { entry: 'listOn', exit: 'listOff', on: { NONE: 'none', NUMBERS: 'numbers', RESET: 'none' } },
        numbers: { entry: 'listOn', exit: 'listOff', on: { NONE: 'none', BULLETS: 'bullets', RESET: 'none' } },
      },
    },
  },
});

export const events = [
  { type: 'BOLD' },
  { type: 'BULLETS' },
  { type: 'NUMBERS' },
  { type: 'RESET' },
  { type: 'BOLD' },
  { type: 'BOLD' },
];
export const can = [{ type: 'BOLD' }, { type: 'NONE' }, { type: 'RESET' }];
export const matches = [{ bold: 'on' }, { list: 'numbers' }, { bold: 'off', list: 'none' }];
