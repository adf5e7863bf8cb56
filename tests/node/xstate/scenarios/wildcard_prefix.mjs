// Partial wildcards `prefix.*`: match `prefix` and `prefix.anything.deeper`; exact beats wildcard;
// a deeper state's wildcard beats an ancestor's exact descriptor.
import { setup, assign } from 'xstate';

const note = (tag) => assign({ log: ({ context, event }) => [...context.log, `${tag}:${event.type}`] });
export const machine = setup({}).createMachine({
  id: 'feed',
  context: { log: [] },
  initial: 'on',
  states: {
    on: {
      initial: 'inner',
      states: {
        inner: {
          on: {
            'mouse.*': { actions: note('inner mouse.*') },
            'key.down': { actions: note('inner key.down') },
          },
        },
      },
      on: {
        'key.*': { actions: note('on key.*') },
        'mouse.click': { actions: note('on mouse.click') },
        'net.*': { target: 'offline', actions: note('on net.*') },
      },
    },
    offline: { on: { 'net.up': 'on' } },
  },
});

export const events = [
  { type: 'mouse.click' },
  { type: 'mouse.move.fast' },
  { type: 'mouse' },
  { type: 'key.down' },
  { type: 'key.up' },
  { type: 'keyboard' },
  { type: 'net.down' },
  { type: 'net.up' },
];
export const can = [{ type: 'key.x' }, { type: 'net' }, { type: 'mousetrap' }];
export const matches = ['offline'];
