// Differential oracle: runs scenario machines through XState's pure API and prints what it saw.
//
// Usage: node run.mjs [--cases <file.json>] [--invalid <file.json>] <scenario> [<scenario> ...]
//   <scenario>: a file in ./scenarios, without .mjs;
//   --cases: a JSON array of generated cases {name, config, input, events, can, matches} whose
//   plain-JSON config is built with the named implementations of ./generated.mjs;
//   --invalid: a JSON object {name: config} of bad configs; reports where XState rejects each.
// Prints ONE JSON document on stdout: {"xstate": version, "scenarios": {...}, "generated": {...}}.
// It never decides pass/fail: the Python differential suite compares its own engine to this record.
// A scenario that fails to load or run is reported as {"loadError": message} so the others still run.
import { createActor, createMachine, initialTransition, transition } from 'xstate';
import canonicalize from 'canonicalize';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { buildMachine } from './generated.mjs';

const here = new URL('.', import.meta.url);
const xstateVersion = JSON.parse(
  readFileSync(new URL('../node_modules/xstate/package.json', here), 'utf8'),
).version;

// JSON round trip: what a log or a hash would see (undefined keys vanish, Error objects become {}).
// A value JSON cannot hold at all (a function, undefined) becomes null, as a host would store it.
const json = (value) => {
  const text = JSON.stringify(value);
  return text === undefined ? null : JSON.parse(text);
};

const orNull = (value) => (value === undefined ? null : json(value));

// Errors are compared by message: the persisted form of a JS Error is {} and says nothing.
const normError = (error) => {
  if (error === undefined) return null;
  if (error instanceof Error) return { message: error.message };
  return json(error);
};

// The executable actions XState's pure API returned, reduced to JSON the Python side can rebuild.
// Built-ins keep the fields that mean something to a host; every key is present (null when unset).
const normAction = ({ type, params: p }) => {
  switch (type) {
    case 'xstate.raise':
      return { type, params: { event: orNull(p.event), id: orNull(p.id), delay: orNull(p.delay) } };
    case 'xstate.cancel':
      return { type, params: { id: orNull(p.sendId) } };
    case 'xstate.spawnChild':
      return {
        type,
        params: {
          id: orNull(p.id),
          src: typeof p.src === 'string' ? p.src : '(logic)',
          input: orNull(p.input),
        },
      };
    case 'xstate.stopChild': // params is the resolved child actor (or undefined if none)
      return { type, params: { id: p ? p.id : null } };
    case 'xstate.sendTo':
      return {
        type,
        params: {
          to: typeof p.to === 'string' ? p.to : p.to ? p.to.id : null,
          event: orNull(p.event),
          delay: orNull(p.delay),
          id: orNull(p.id),
        },
      };
    case 'xstate.emit':
      return { type, params: { event: orNull(p.event) } };
    case 'xstate.log':
      return { type, params: { value: orNull(p.value), label: orNull(p.label) } };
    default:
      return { type, params: orNull(p) };
  }
};

const hashOf = (persisted) => createHash('sha256').update(canonicalize(persisted)).digest('hex');

const record = (machine, snapshot, actions, scenario) => {
  const persisted = json(machine.getPersistedSnapshot(snapshot));
  return {
    persisted,
    hash: hashOf(persisted),
    status: snapshot.status,
    value: json(snapshot.value),
    output: orNull(snapshot.output),
    error: normError(snapshot.error),
    tags: [...snapshot.tags].sort(),
    actions: actions.map(normAction),
    can: (scenario.can ?? []).map((event) => snapshot.can(event)),
    matches: (scenario.matches ?? []).map((value) => snapshot.matches(value)),
  };
};

// What a host gets by restoring the previous persisted snapshot (createActor(machine,
// {snapshot})) and sending the same event. Reported only where it differs from the continuous
// run: the persisted form does not keep everything (e.g. the order of a history value's nodes).
const restoredStep = (machine, persisted, event, step, scenario) => {
  let restored;
  try {
    const snapshot = createActor(machine, { snapshot: persisted }).getSnapshot();
    const [next, actions] = transition(machine, snapshot, event);
    restored = record(machine, next, actions, scenario);
  } catch (error) {
    return 'threw' in step ? {} : { restoredThrew: String(error?.message ?? error) };
  }
  if ('threw' in step) return { restored };
  const { event: _event, ...continuous } = step;
  return JSON.stringify(restored) === JSON.stringify(continuous) ? {} : { restored };
};

const runScenario = (scenario) => {
  const { machine, input, events = [] } = scenario;
  const steps = [];
  let snapshot;
  let actions;
  try {
    [snapshot, actions] =
      input === undefined ? initialTransition(machine) : initialTransition(machine, input);
  } catch (error) {
    return { input: orNull(input), events, initialThrew: String(error?.message ?? error), steps };
  }
  steps.push({ event: null, ...record(machine, snapshot, actions, scenario) });
  for (const event of events) {
    const before = steps.at(-1).persisted ?? json(machine.getPersistedSnapshot(snapshot));
    let step;
    try {
      const [next, nextActions] = transition(machine, snapshot, event);
      snapshot = next;
      step = { event, ...record(machine, snapshot, nextActions, scenario) };
    } catch (error) {
      // The caller keeps its previous snapshot; the next event is sent to that one.
      step = { event, threw: String(error?.message ?? error) };
    }
    Object.assign(step, restoredStep(machine, before, event, step, scenario));
    steps.push(step);
  }
  return {
    input: orNull(input),
    events,
    can: scenario.can ?? [],
    matches: scenario.matches ?? [],
    steps,
  };
};

// Where XState rejects a bad plain-JSON config: at createMachine, initialTransition, or the
// first transition (event GO); null if it never does.
const rejection = (config) => {
  let stage = 'createMachine';
  try {
    const machine = createMachine(config);
    stage = 'initialTransition';
    const [snapshot] = initialTransition(machine);
    stage = 'transition';
    transition(machine, snapshot, { type: 'GO' });
    return null;
  } catch (error) {
    return { stage, message: String(error?.message ?? error) };
  }
};

const args = process.argv.slice(2);
const out = { xstate: xstateVersion, scenarios: {}, generated: {}, invalid: {} };
const invalidAt = args.indexOf('--invalid');
if (invalidAt !== -1) {
  const [, file] = args.splice(invalidAt, 2);
  for (const [name, config] of Object.entries(JSON.parse(readFileSync(file, 'utf8')))) {
    out.invalid[name] = rejection(config);
  }
}
const casesAt = args.indexOf('--cases');
if (casesAt !== -1) {
  const [, file] = args.splice(casesAt, 2);
  for (const generated of JSON.parse(readFileSync(file, 'utf8'))) {
    try {
      const machine = buildMachine(generated.config);
      out.generated[generated.name] = runScenario({
        ...generated,
        machine,
        input: generated.input ?? undefined,
      });
    } catch (error) {
      out.generated[generated.name] = { loadError: String(error?.stack ?? error) };
    }
  }
}
for (const name of args) {
  try {
    const scenario = await import(new URL(`./scenarios/${name}.mjs`, here).href);
    out.scenarios[name] = runScenario(scenario);
  } catch (error) {
    out.scenarios[name] = { loadError: String(error?.stack ?? error) };
  }
}
process.stdout.write(JSON.stringify(out));
