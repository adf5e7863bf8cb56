// History inside a parallel region inside a compound: leaving and re-entering the compound.
import { setup } from 'xstate';

export const machine = setup({ actions: { enterZoomed: () => {} } }).createMachine({
  id: 'app',
  initial: 'main',
  states: {
    main: {
      initial: 'view',
      on: { LOCK: 'locked' },
      states: {
        view: {
          type: 'parallel',
          states: {
            zoom: {
              initial: 'normal',
              states: {
                normal: { on: { ZOOM: 'zoomed' } },
                zoomed: { entry: 'enterZoomed', initial: 'x2', states: { x2: { on: { ZOOM: 'x4' } }, x4: {} } },
                h: { type: 'history', history: 'deep' },
              },
            },
            panel: {
              initial: 'closed',
              states: {
                closed: { on: { PANEL: 'open' } },
                open: { on: { PANEL: 'closed' } },
                h: { type: 'history' },
              },
            },
          },
        },
        settings: {},
        back: { type: 'history', history: 'deep' },
      },
    },
    locked: {
      on: {
        UNLOCK: 'main.back',
        UNLOCK_REGIONS: { target: ['#app.main.view.zoom.h', '#app.main.view.panel.h'] },
        UNLOCK_FRESH: 'main',
      },
    },
  },
});

export const events = [
  { type: 'ZOOM' },
  { type: 'ZOOM' },
  { type: 'PANEL' },
  { type: 'LOCK' },
  { type: 'UNLOCK' },
  { type: 'PANEL' },
  { type: 'LOCK' },
  { type: 'UNLOCK_FRESH' },
  { type: 'ZOOM' },
  { type: 'PANEL' },
  { type: 'LOCK' },
  { type: 'UNLOCK_REGIONS' },
];
export const can = [{ type: 'ZOOM' }, { type: 'UNLOCK' }];
export const matches = [
  { main: { view: { zoom: { zoomed: 'x4' } } } },
  { main: { view: { panel: 'open' } } },
  'locked',
];
