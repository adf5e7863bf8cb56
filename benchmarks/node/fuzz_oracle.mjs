// XState oracle for the engine's random-machine differential check (tests/engine/test_fuzz_against_xstate.py,
// benchmarks/fuzz_engine.py). Reads {cases: [{config, input, events}]} as JSON on stdin; every name in
// a config comes from the fixed vocabulary below (the Python side has the same one). For each case it
// prints the persisted snapshot and the normalised actions after initialTransition and after each event
// (or {threw} when XState throws; the previous snapshot is kept, as a host would). With `restore`, each
// step continues from the persisted JSON restored (createActor(machine, {snapshot}).getSnapshot()).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '..', '..', 'tests', 'node', 'package.json'));
const X = require('xstate');
const { createActor, setup, assign, raise, emit, log, cancel, spawnChild, stopChild, sendTo, and, or, not, stateIn, enqueueActions,
  fromPromise, initialTransition, transition } = X;

const impl = {
  actors: { w: fromPromise(async () => 1) },
  guards: {
    even: ({ context }) => context.n % 2 === 0,
    big: ({ context }, params) => context.n > (params?.min ?? 3),
    flag: ({ event }) => event.flag === true,
    evenAndBig: and(['even', { type: 'big', params: { min: 2 } }]),
    oddOrFlag: or([not('even'), 'flag']),
    inS1: stateIn('#m.s1'),
  },
  actions: {
    inc: assign({ n: ({ context }) => context.n + 1 }),
    dbl: assign(({ context }) => ({ n: (context.n * 2) % 97 })),
    push: assign({ seen: ({ context, event }) => [...context.seen, event.type].slice(-5) }),
    raiseA: raise({ type: 'A' }),
    raiseB: raise({ type: 'B', flag: true }),
    emitX: emit(({ context }) => ({ type: 'X', n: context.n })),
    logIt: log(({ context }) => context.n, 'n'),
    custom: () => {},
    delayed: raise({ type: 'C' }, { delay: 100, id: 'd1' }),
    cancelD: cancel('d1'),
    spawnW: spawnChild('w', { id: 'w1', input: ({ context }) => ({ n: context.n }) }),
    stopW: stopChild('w1'),
    sendW: sendTo('w1', { type: 'PING' }),
    enq: enqueueActions(({ enqueue, check }) => { if (check('even')) enqueue('inc'); else enqueue.raise({ type: 'D' }); }),
  },
};

function norm(action) {
  const p = action.params;
  const clean = (o) => JSON.parse(JSON.stringify(o ?? null));
  switch (action.type) {
    case 'xstate.stopChild':
      return { type: action.type, params: p ? { id: p.id } : null };
    case 'xstate.spawnChild':
      return { type: action.type, params: clean({ id: p.id, src: p.src, input: p.input, systemId: p.systemId }) };
    case 'xstate.sendTo':
      return { type: action.type, params: clean({ to: p.targetId, targetId: p.targetId, event: p.event, id: p.id, delay: p.delay }) };
    default:
      return { type: action.type, params: clean(p) };
  }
}

function errorText(e) { return String(e && e.message || e); }

// Markers the generator uses where a config needs a function: replaced by the same function on both sides.
function withFunctions(node) {
  if (Array.isArray(node)) return node.map(withFunctions);
  if (!node || typeof node !== 'object') return node;
  const out = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'context' && v === 'FROM_INPUT') out[k] = ({ input }) => ({ n: input?.n ?? 0, seen: [] });
    else if (k === 'output' && v === 'OUTPUT_FN') out[k] = ({ context, event }) => ({ n: context.n, ev: event.type, out: event.output ?? null });
    else out[k] = withFunctions(v);
  }
  return out;
}

const { cases } = JSON.parse(readFileSync(0, 'utf8'));
const out = [];
for (const c of cases) {
  const steps = [];
  let machine;
  try {
    machine = setup(impl).createMachine(withFunctions(c.config));
  } catch (e) {
    out.push({ buildError: errorText(e) });
    continue;
  }
  let snapshot;
  try {
    const [s, actions] = c.input === null ? initialTransition(machine) : initialTransition(machine, c.input);
    snapshot = s;
    steps.push({ persisted: clean(machine.getPersistedSnapshot(s)), actions: actions.map(norm) });
  } catch (e) {
    out.push({ initialThrew: errorText(e) });
    continue;
  }
  for (const event of c.events) {
    try {
      const [s, actions] = transition(machine, snapshot, event);
      const persisted = clean(machine.getPersistedSnapshot(s));
      // restore: continue from the persisted JSON, as a checkpointed replay does
      snapshot = c.restore ? createActor(machine, { snapshot: clean(persisted) }).getSnapshot() : s;
      steps.push({ persisted, actions: actions.map(norm) });
    } catch (e) {
      steps.push({ threw: errorText(e) });
    }
  }
  out.push({ steps });
}
function clean(o) { return JSON.parse(JSON.stringify(o)); }
process.stdout.write(JSON.stringify(out));
