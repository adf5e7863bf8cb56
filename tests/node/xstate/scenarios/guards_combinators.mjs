// and / or / not over named guards (with params) and inline guards, nested.
import { setup, assign, and, or, not } from 'xstate';

export const machine = setup({
  guards: {
    isAdmin: ({ context }) => context.role === 'admin',
    isOwner: ({ context, event }) => context.user === event.owner,
    hasFlag: ({ context }, params) => context.flags.includes(params.flag),
  },
}).createMachine({
  id: 'acl',
  context: ({ input }) => ({ role: input.role, user: input.user, flags: [], log: [] }),
  initial: 'idle',
  states: {
    idle: {
      on: {
        EDIT: [
          { guard: or(['isAdmin', and(['isOwner', not({ type: 'hasFlag', params: { flag: 'locked' } })])]), actions: assign({ log: ({ context, event }) => [...context.log, `edit ${event.owner}`] }) },
          { actions: assign({ log: ({ context, event }) => [...context.log, `denied ${event.owner}`] }) },
        ],
        LOCK: { actions: assign({ flags: ({ context }) => [...context.flags, 'locked'] }) },
        PROMOTE: { actions: assign({ role: 'admin' }) },
        DELETE: { guard: and(['isAdmin', ({ event }) => event.confirm === true]), target: 'deleted' },
      },
    },
    deleted: {},
  },
});

export const input = { role: 'user', user: 'ann' };
export const events = [
  { type: 'EDIT', owner: 'ann' },
  { type: 'EDIT', owner: 'bob' },
  { type: 'LOCK' },
  { type: 'EDIT', owner: 'ann' },
  { type: 'DELETE', confirm: true },
  { type: 'PROMOTE' },
  { type: 'EDIT', owner: 'bob' },
  { type: 'DELETE', confirm: false },
  { type: 'DELETE', confirm: true },
];
export const can = [{ type: 'DELETE', confirm: true }, { type: 'EDIT', owner: 'zed' }];
export const matches = ['idle', 'deleted'];
