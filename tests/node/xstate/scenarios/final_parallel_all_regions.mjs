// A parallel state is done only when every region reached a final state.
import { setup, assign } from 'xstate';

export const machine = setup({}).createMachine({
  id: 'upload',
  context: { seen: [] },
  initial: 'working',
  states: {
    working: {
      type: 'parallel',
      states: {
        files: {
          initial: 'sending',
          states: { sending: { on: { FILES_OK: 'sent' } }, sent: { type: 'final' } },
        },
        meta: {
          initial: 'sending',
          states: {
            sending: { on: { META_OK: 'sent' } },
            sent: { type: 'final' },
          },
        },
      },
      onDone: {
        target: 'finished',
        actions: assign({ seen: ({ context, event }) => [...context.seen, event.type] }),
      },
    },
    finished: {},
  },
});

export const events = [
  { type: 'FILES_OK' },
  { type: 'FILES_OK' },
  { type: 'META_OK' },
  { type: 'META_OK' },
];
export const can = [{ type: 'FILES_OK' }, { type: 'META_OK' }];
export const matches = ['finished', { working: { files: 'sent' } }];
