// Named implementations for the generated (fuzz) cases: the JS twin of
// tests/engine/differential/generated_machines.py `build_machine`. The configs are plain JSON
// made by that generator; both sides load the same JSON and differ only in their engine.
import { setup, assign, raise, cancel, fromPromise, stateIn, and, or, not, spawnChild, stopChild, sendTo, emit, log } from 'xstate';

export const buildMachine = (config) =>
  setup({
    guards: {
      isEven: ({ context }) => context.n % 2 === 0,
      isOdd: ({ context }) => context.n % 2 === 1,
      below: ({ context }, params) => context.n < params.max,
      inS0: stateIn('#gen.s0'),
      inR0: stateIn('#gen.r0'),
      evenOrSmall: or(['isEven', { type: 'below', params: { max: 3 } }]),
      notEven: not('isEven'),
      oddAndSmall: and(['isOdd', { type: 'below', params: { max: 6 } }]),
    },
    actions: {
      inc: assign({ n: ({ context }) => context.n + 1 }),
      add: assign({ n: ({ context }, params) => context.n + params.by }),
      track: assign({ trail: ({ context, event }) => [...context.trail, event.type].slice(-8) }),
      notify: () => {},
      raisePing: raise({ type: 'PING' }),
      delayPing: raise({ type: 'PING' }, { delay: 50, id: 'dp' }),
      cancelPing: cancel('dp'),
      spawnHelper: spawnChild('task', { id: 'helper', input: ({ context }) => ({ n: context.n }) }),
      stopHelper: stopChild('helper'),
      pokeHelper: sendTo('helper', { type: 'POKE' }),
      pokeLater: sendTo('helper', ({ context }) => ({ type: 'LATER', n: context.n }), { delay: 'short', id: 'pl' }),
      emitN: emit(({ context, event }) => ({ type: 'n', n: context.n, on: event.type })),
      logN: log(({ context }) => context.n, 'n'),
    },
    actors: { task: fromPromise(async ({ input }) => input) },
    delays: { short: 10 },
  }).createMachine(config);
