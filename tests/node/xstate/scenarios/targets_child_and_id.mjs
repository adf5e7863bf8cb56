// Target forms: sibling name, `.child` (a child of the source), `#id` (a custom id anywhere).
import { setup } from 'xstate';

export const machine = setup({}).createMachine({
  id: 'nav',
  initial: 'home',
  states: {
    home: {
      initial: 'top',
      states: {
        top: { on: { DOWN: 'bottom' } },
        bottom: { id: 'homeBottom' },
      },
      on: { SETTINGS: 'settings', BOTTOM: '.bottom', TOP: '.top' },
    },
    settings: {
      initial: 'general',
      states: {
        general: {},
        privacy: { id: 'privacy', initial: 'cookies', states: { cookies: {}, tracking: { id: 'tracking' } } },
      },
      on: { PRIVACY: '#privacy', TRACKING: '#tracking', HOME_BOTTOM: '#homeBottom', HOME: '#nav.home' },
    },
  },
});

export const events = [
  { type: 'BOTTOM' },
  { type: 'TOP' },
  { type: 'SETTINGS' },
  { type: 'TRACKING' },
  { type: 'PRIVACY' },
  { type: 'HOME_BOTTOM' },
  { type: 'SETTINGS' },
  { type: 'HOME' },
];
export const can = [{ type: 'PRIVACY' }, { type: 'BOTTOM' }];
export const matches = [{ home: 'bottom' }, { settings: { privacy: 'tracking' } }, { settings: 'privacy' }];
