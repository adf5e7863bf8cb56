// Records an event log of the shared agent machine with XState itself (the JS twin of
// tests/replay/machines.py, declared version "1"), hashing each persisted snapshot with the npm
// `canonicalize` (RFC 8785) + SHA-256 — the way a JavaScript host would. Reads the events as JSON
// on stdin, writes the entries as JSON on stdout. Pure: no actor runs (XState's pure API).
import { createRequire } from "node:module";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "..", "..", "node", "package.json"));
const { setup, assign, fromPromise, initialTransition, transition } = require("xstate");
const canonicalize = require("canonicalize");

const HISTORY_CAP = 20;
const append = (history, item) => [...history, item].slice(-HISTORY_CAP);
const clockNow = Number(process.env.AGENT_CLOCK ?? "0");

const machine = setup({
  guards: { withinWindow: () => clockNow <= 1000 },
  actions: {
    recordQuestion: assign(({ context, event }) => ({
      question: event.text ?? "", history: append(context.history, { ask: event.text ?? "" }) })),
    recordDraft: assign(({ context, event }) => ({
      answer: event.output?.text ?? null, drafts: context.drafts + 1,
      history: append(context.history, { draft: event.output?.text ?? null }) })),
    recordError: assign(({ context }) => ({ errors: context.errors + 1 })),
    recordCancel: assign(({ context }) => ({ history: append(context.history, "cancel") })),
    recordTimeout: assign(({ context }) => ({ history: append(context.history, "timeout") })),
    recordApprove: assign(({ context }) => ({ history: append(context.history, "approve") })),
    recordLate: assign(({ context }) => ({ history: append(context.history, "late") })),
    recordReject: assign(({ context }) => ({ history: append(context.history, "reject") })),
    recordLookup: assign(({ context, event }) => ({
      approved: context.approved + 1, history: append(context.history, { lookup: event.output ?? null }) })),
  },
  actors: { draft: fromPromise(async () => null), lookup: fromPromise(async () => null) },
}).createMachine({
  id: "agent",
  version: "1",
  context: ({ input }) => ({
    question: input?.question ?? "", history: [], drafts: 0, approved: 0, errors: 0, answer: null }),
  initial: "idle",
  states: {
    idle: { on: { ASK: { target: "thinking", actions: "recordQuestion" }, STOP: { target: "stopped" } } },
    thinking: {
      invoke: {
        id: "draft", src: "draft", input: ({ context }) => ({ question: context.question }),
        onDone: { target: "deciding", actions: "recordDraft" },
        onError: { target: "idle", actions: "recordError" },
      },
      on: { CANCEL: { target: "idle", actions: "recordCancel" } },
    },
    deciding: {
      after: { 60000: { target: "idle", actions: "recordTimeout" } },
      on: {
        APPROVE: [
          { guard: "withinWindow", target: "acting", actions: "recordApprove" },
          { target: "idle", actions: "recordLate" },
        ],
        REJECT: { target: "thinking", actions: "recordReject" },
      },
    },
    acting: {
      invoke: {
        id: "lookup", src: "lookup", input: ({ context }) => ({ answer: context.answer }),
        onDone: { target: "idle", actions: "recordLookup" },
        onError: { target: "idle", actions: "recordError" },
      },
    },
    stopped: { type: "final" },
  },
  output: ({ context }) => ({ approved: context.approved, drafts: context.drafts }),
});

const hash = (snapshot) =>
  createHash("sha256").update(canonicalize(machine.getPersistedSnapshot(snapshot)), "utf8").digest("hex");
const stamp = (index) => new Date(Date.UTC(2026, 0, 1) + index + 1).toISOString();

const { input, events } = JSON.parse(readFileSync(0, "utf8"));
let [snapshot] = initialTransition(machine, input);
const entry = (index, event) => ({
  schemaVersion: 1, id: `js${index}`, index, recordedAt: stamp(index), machineId: "agent",
  machineVersion: "1", event, verification: { stateHash: hash(snapshot) } });
const entries = [entry(0, { type: "@agent.init", input })];
events.forEach((event, offset) => {
  if (event.type !== "@agent.usage") [snapshot] = transition(machine, snapshot, event);
  entries.push(entry(offset + 1, event));
});
process.stdout.write(JSON.stringify(entries));
