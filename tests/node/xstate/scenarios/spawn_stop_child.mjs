// spawnChild / stopChild: children appear in and vanish from the persisted snapshot; actions
// report the id, src and resolved input. Stopping a child that does not exist is a no-op.
import { setup, spawnChild, stopChild, fromPromise } from 'xstate';

export const machine = setup({
  actors: { fetcher: fromPromise(async () => 1), saver: fromPromise(async () => 2) },
}).createMachine({
  id: 'pool',
  context: { url: '/a' },
  initial: 'running',
  states: {
    running: {
      on: {
        SPAWN: { actions: spawnChild('fetcher', { id: 'f1', input: ({ context, event }) => ({ url: context.url, n: event.n }) }) },
        SPAWN2: { actions: spawnChild('saver', { id: 's1', input: 5 }) },
        SPAWN_PLAIN: { actions: spawnChild('saver', { id: 's2' }) },
        STOP1: { actions: stopChild('f1') },
        STOP_DYN: { actions: stopChild(({ event }) => event.id) },
        STOP_MISSING: { actions: stopChild('nope') },
        END: 'ended',
      },
    },
    ended: { type: 'final' },
  },
});

export const events = [
  { type: 'SPAWN', n: 1 },
  { type: 'SPAWN2' },
  { type: 'SPAWN_PLAIN' },
  { type: 'STOP1' },
  { type: 'STOP_MISSING' },
  { type: 'STOP_DYN', id: 's1' },
  { type: 'END' },
];
export const can = [{ type: 'SPAWN', n: 2 }];
export const matches = ['running'];
