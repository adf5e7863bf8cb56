// Fold benchmark, XState side: the agent-like loop machine (twin of benchmarks/fold.py's), folded
// with XState's pure `transition` over the events in argv[2] (a JSON array), timed with and without
// hashing the persisted snapshot at every step (getPersistedSnapshot + canonicalize + SHA-256).
// Prints one JSON object on stdout. Uses tests/node/node_modules (xstate 5.33.3, canonicalize 2.0.0).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '..', '..', 'tests', 'node', 'package.json'));
const { setup, assign, fromPromise, initialTransition, transition } = require('xstate');
const canonicalizeModule = require('canonicalize');
const canonicalize = canonicalizeModule.default ?? canonicalizeModule;
const xstateVersion = require('xstate/package.json').version;

const CAP = 20;
const remember = (context, item) => [...context.history, item].slice(-CAP);

export const machine = setup({
  actors: { think: fromPromise(async () => ({})), act: fromPromise(async () => ({})) },
  guards: {
    wantsTool: ({ context }) => context.lastThought !== null && context.lastThought.tool !== null,
    isFinished: ({ context }) => context.lastThought !== null && context.lastThought.final === true,
    underBudget: ({ context }, params) => context.turns < params.max,
  },
  actions: {
    recordStart: assign({
      turns: ({ context }) => context.turns + 1,
      history: ({ context, event }) => remember(context, { kind: 'start', prompt: event.prompt }),
    }),
    recordThought: assign({
      lastThought: ({ event }) => event.output,
      history: ({ context, event }) => remember(context, { kind: 'thought', text: event.output.text }),
    }),
    recordObservation: assign({
      history: ({ context, event }) => remember(context, { kind: 'observation', result: event.output.result }),
    }),
    recordError: assign({
      errors: ({ context }) => context.errors + 1,
      history: ({ context, event }) => remember(context, { kind: 'error', message: event.error.message }),
    }),
    recordCancel: assign({
      cancels: ({ context }) => context.cancels + 1,
      history: ({ context }) => remember(context, { kind: 'cancel' }),
    }),
    finish: assign({ finished: ({ context }) => context.finished + 1, lastThought: null }),
  },
  delays: { thinkTimeout: 30000 },
}).createMachine({
  id: 'agent',
  initial: 'idle',
  context: { turns: 0, errors: 0, cancels: 0, finished: 0, lastThought: null, history: [] },
  states: {
    idle: {
      on: { START: { target: 'thinking', guard: { type: 'underBudget', params: { max: 1000000000 } }, actions: 'recordStart' } },
    },
    thinking: {
      invoke: {
        id: 'think', src: 'think',
        input: ({ context }) => ({ turn: context.turns, recent: context.history.length }),
        onDone: { target: 'deciding', actions: 'recordThought' },
        onError: { target: 'idle', actions: 'recordError' },
      },
      after: { thinkTimeout: { target: 'idle', actions: 'recordCancel' } },
      on: { CANCEL: { target: 'idle', actions: 'recordCancel' } },
    },
    deciding: {
      always: [
        { guard: 'wantsTool', target: 'acting' },
        { guard: 'isFinished', target: 'idle', actions: 'finish' },
        { target: 'idle' },
      ],
    },
    acting: {
      invoke: {
        id: 'act', src: 'act',
        input: ({ context }) => ({ tool: context.lastThought.tool }),
        onDone: { target: 'idle', actions: 'recordObservation' },
        onError: { target: 'idle', actions: 'recordError' },
      },
      on: { CANCEL: { target: 'idle', actions: 'recordCancel' } },
    },
  },
});

function stateHash(snapshot) {
  return createHash('sha256').update(canonicalize(machine.getPersistedSnapshot(snapshot))).digest('hex');
}

function fold(events, hash) {
  let [snapshot] = initialTransition(machine);
  let last = hash ? stateHash(snapshot) : null;
  const start = performance.now();
  for (const event of events) {
    [snapshot] = transition(machine, snapshot, event);
    if (hash) last = stateHash(snapshot);
  }
  const seconds = (performance.now() - start) / 1000;
  return { seconds, snapshot, last };
}

const events = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const warm = events.slice(0, Math.min(2000, events.length));
fold(warm, false);
fold(warm, true);
const plain = fold(events, false);
const hashed = fold(events, true);
process.stdout.write(JSON.stringify({
  xstate: xstateVersion,
  node: process.version,
  events: events.length,
  plain: { seconds: plain.seconds, eventsPerSecond: events.length / plain.seconds },
  hashed: { seconds: hashed.seconds, eventsPerSecond: events.length / hashed.seconds },
  finalHash: hashed.last,
  finalPersisted: machine.getPersistedSnapshot(hashed.snapshot),
}));
