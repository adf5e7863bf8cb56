"""Fold benchmark: agent_explorer's engine against XState's pure `transition`, same run, same events.

One agent-like machine (idle -> thinking (invoke) -> deciding (guards on context, `always`) ->
acting (invoke) -> idle, with error, timeout and cancel paths and an `assign` that appends to a
history list capped at 20), 100,000 events, folded by this engine and by XState in Node
(benchmarks/node/fold.mjs, the twin machine). Prints events/s for both and their ratio, with and
without computing the persisted snapshot's `state_hash` at every step, and checks both folds end
in the same persisted snapshot (hash). The two sides run in interleaved rounds; each reports its
best run.

Then the verification ratios (issue 24), all against the bare fold of the same round set: the fold
plus `state_hash(get_persisted_snapshot(s))` per step (the plain hash), the same with `check_state_hash`
against the recorded hash, the same work arranged as the verifying fold arranges it (each state's text at its
step, the SHA-256s of 32 states together), the verifying fold's own step (one stepper without actions, then
that), and `verify_log` / `replay(verify=True)` over the run recorded
as a log (every entry hashed, by the plain `state_hash`, so a clean report also proves the two hash alike).
`--profile` prints where the time of the hashed fold and of `verify_log` goes (cProfile).

    .venv/bin/python benchmarks/fold.py [--events 100000] [--rounds 2] [--seed 7] [--no-node] [--profile]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_explorer.canonical.jcs import state_hash
from agent_explorer.eventlog.entries import create_replay_entry, init_entry
from agent_explorer.eventlog.fold import fold
from agent_explorer.eventlog.replay import replay
from agent_explorer.eventlog.verification import verify_log

try:  # absent before issue 24: run this file against an older checkout for the "before" figures
    from agent_explorer.canonical.verify_hash import check_state_hash
except ImportError:  # pragma: no cover
    check_state_hash = None
try:  # absent before the batched verifying fold (issue 24, third round)
    from hashlib import sha256

    from agent_explorer.canonical.verify_hash import is_jcs_text, strict_text
    from agent_explorer.engine.transition import snapshot_stepper
    from agent_explorer.eventlog.verifying_fold import BATCH
except ImportError:  # pragma: no cover
    BATCH = None
try:  # absent before the verifying fold (issue 24, second round)
    from agent_explorer.engine.transition import next_snapshot
except ImportError:  # pragma: no cover
    next_snapshot = None
from agent_explorer.engine import (
    assign,
    from_promise,
    initial_transition,
    setup,
    transition,
)

CAP = 20


def _remember(context: dict[str, Any], item: dict[str, Any]) -> list[Any]:
    return (context["history"] + [item])[-CAP:]


async def _task(input: Any = None) -> dict[str, Any]:  # never run: the pure API runs nothing
    return {}


def build_machine() -> Any:
    """The Python twin of the machine in benchmarks/node/fold.mjs."""
    return setup(
        actors={"think": from_promise(_task), "act": from_promise(_task)},
        guards={
            "wantsTool": lambda c, e, p: c["lastThought"] is not None and c["lastThought"]["tool"] is not None,
            "isFinished": lambda c, e, p: c["lastThought"] is not None and c["lastThought"]["final"] is True,
            "underBudget": lambda c, e, p: c["turns"] < p["max"],
        },
        actions={
            "recordStart": assign({
                "turns": lambda c, e, p: c["turns"] + 1,
                "history": lambda c, e, p: _remember(c, {"kind": "start", "prompt": e["prompt"]}),
            }),
            "recordThought": assign({
                "lastThought": lambda c, e, p: e["output"],
                "history": lambda c, e, p: _remember(c, {"kind": "thought", "text": e["output"]["text"]}),
            }),
            "recordObservation": assign({
                "history": lambda c, e, p: _remember(c, {"kind": "observation", "result": e["output"]["result"]}),
            }),
            "recordError": assign({
                "errors": lambda c, e, p: c["errors"] + 1,
                "history": lambda c, e, p: _remember(c, {"kind": "error", "message": e["error"]["message"]}),
            }),
            "recordCancel": assign({
                "cancels": lambda c, e, p: c["cancels"] + 1,
                "history": lambda c, e, p: _remember(c, {"kind": "cancel"}),
            }),
            "finish": assign({"finished": lambda c, e, p: c["finished"] + 1, "lastThought": None}),
        },
        delays={"thinkTimeout": 30000},
    ).create_machine({
        "id": "agent",
        "initial": "idle",
        "context": {"turns": 0, "errors": 0, "cancels": 0, "finished": 0, "lastThought": None, "history": []},
        "states": {
            "idle": {
                "on": {"START": {"target": "thinking", "guard": {"type": "underBudget", "params": {"max": 1000000000}},
                                 "actions": "recordStart"}},
            },
            "thinking": {
                "invoke": {
                    "id": "think", "src": "think",
                    "input": lambda c, e, p: {"turn": c["turns"], "recent": len(c["history"])},
                    "onDone": {"target": "deciding", "actions": "recordThought"},
                    "onError": {"target": "idle", "actions": "recordError"},
                },
                "after": {"thinkTimeout": {"target": "idle", "actions": "recordCancel"}},
                "on": {"CANCEL": {"target": "idle", "actions": "recordCancel"}},
            },
            "deciding": {
                "always": [
                    {"guard": "wantsTool", "target": "acting"},
                    {"guard": "isFinished", "target": "idle", "actions": "finish"},
                    {"target": "idle"},
                ],
            },
            "acting": {
                "invoke": {
                    "id": "act", "src": "act",
                    "input": lambda c, e, p: {"tool": c["lastThought"]["tool"]},
                    "onDone": {"target": "idle", "actions": "recordObservation"},
                    "onError": {"target": "idle", "actions": "recordError"},
                },
                "on": {"CANCEL": {"target": "idle", "actions": "recordCancel"}},
            },
        },
    })


def make_events(count: int, seed: int) -> list[dict[str, Any]]:
    """A log-like event stream: mostly well-formed turns, some errors, cancels, timeouts, strays."""
    rng = random.Random(seed)
    events: list[dict[str, Any]] = []
    turn = 0
    while len(events) < count:
        turn += 1
        events.append({"type": "START", "prompt": f"question {turn}"})
        roll = rng.random()
        if roll < 0.05:
            events.append({"type": "CANCEL"})
            continue
        if roll < 0.08:
            events.append({"type": "xstate.after.thinkTimeout.agent.thinking"})
            continue
        if roll < 0.12:
            events.append({"type": "xstate.error.actor.think", "error": {"message": "model overloaded"}})
            continue
        tool = rng.choice([None, "search", "calculator", "browser"])
        final = tool is None and rng.random() < 0.5
        events.append({"type": "xstate.done.actor.think",
                       "output": {"text": f"thought {turn}", "tool": tool, "final": final}})
        if rng.random() < 0.03:
            events.append({"type": "xstate.done.actor.think", "output": {"text": "stale", "tool": None, "final": False}})
        if tool is not None:
            if rng.random() < 0.05:
                events.append({"type": "xstate.error.actor.act", "error": {"message": "tool failed"}})
            else:
                events.append({"type": "xstate.done.actor.act", "output": {"result": f"{tool} result {turn}"}})
    return events[:count]


def fold_python(
    machine: Any, events: list[dict[str, Any]], hashed: bool, hasher: Any = state_hash,
    clock: Any = time.perf_counter,
) -> tuple[float, Any, str | None]:
    snapshot, _ = initial_transition(machine)
    persist = machine.get_persisted_snapshot
    last = hasher(persist(snapshot)) if hashed else None
    start = clock()
    if hashed:
        for event in events:
            snapshot, _ = transition(machine, snapshot, event)
            last = hasher(persist(snapshot))
    else:
        for event in events:
            snapshot, _ = transition(machine, snapshot, event)
    return clock() - start, snapshot, last


def fold_checked(machine: Any, events: list[dict[str, Any]], recorded: list[str], clock: Any) -> float:
    """The fold plus, per step, the verifying fold's hash of the persisted snapshot against the record."""
    snapshot, _ = initial_transition(machine)
    persist = machine.get_persisted_snapshot
    start = clock()
    for event, expected in zip(events, recorded, strict=True):
        snapshot, _ = transition(machine, snapshot, event)
        if check_state_hash(persist(snapshot), expected) != expected:
            raise AssertionError("check_state_hash disagrees with the recorded state_hash")
    return float(clock() - start)


def fold_verifying_step(machine: Any, events: list[dict[str, Any]], recorded: list[str], clock: Any) -> float:
    """What the verifying fold does per ordinary entry (verify_log's fast path, minus reading the entries): one
    stepper for the whole fold (no actions, one engine Scope), each state's persisted snapshot rendered right
    after its step, the SHA-256s of `BATCH` states compared with the record together. Before the batched fold
    (no `snapshot_stepper`): `next_snapshot` + `check_state_hash` per step, as that fold did."""
    snapshot, _ = initial_transition(machine)
    persist = machine.get_persisted_snapshot
    if BATCH is None:
        start = clock()
        for event, expected in zip(events, recorded, strict=True):
            snapshot = next_snapshot(machine, snapshot, event)
            if check_state_hash(persist(snapshot), expected) != expected:
                raise AssertionError("check_state_hash disagrees with the recorded state_hash")
        return float(clock() - start)
    step = snapshot_stepper(machine)
    start = clock()
    for first in range(0, len(events), BATCH):
        texts = []
        for event in events[first:first + BATCH]:
            snapshot = step(snapshot, event)
            text = strict_text(persist(snapshot))
            if text is None:
                raise AssertionError("this workload's states are JSON")
            texts.append(text)
        if not is_jcs_text(b"".join(texts)) or [sha256(t).hexdigest() for t in texts] != recorded[first:first + BATCH]:
            raise AssertionError("the batch's hashes disagree with the recorded state_hash")
    return float(clock() - start)


def fold_checked_in_batches(machine: Any, events: list[dict[str, Any]], recorded: list[str], clock: Any) -> float:
    """The same work as fold_checked, arranged as the verifying fold arranges it: each step's persisted snapshot
    rendered (orjson, strict) right after the step, the SHA-256s of `BATCH` steps computed and compared together."""
    snapshot, _ = initial_transition(machine)
    persist = machine.get_persisted_snapshot
    start = clock()
    for first in range(0, len(events), BATCH):
        texts = []
        for event in events[first:first + BATCH]:
            snapshot, _ = transition(machine, snapshot, event)
            text = strict_text(persist(snapshot))
            if text is None or not is_jcs_text(text):
                raise AssertionError("this workload renders as JCS text")
            texts.append(text)
        if [sha256(text).hexdigest() for text in texts] != recorded[first:first + BATCH]:
            raise AssertionError("the batch's hashes disagree with the recorded state_hash")
    return float(clock() - start)


def record_log(machine: Any, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The run as a log, every entry hashed by the plain `state_hash` (the recorder's)."""
    snapshot, _ = initial_transition(machine)
    entries = [init_entry(machine, metadata={"executionId": "bench"}, id="e0")]
    for index, event in enumerate(events, 1):
        snapshot, _ = transition(machine, snapshot, event)
        entries.append(create_replay_entry(machine, event, index, snapshot_after=snapshot, id=f"e{index}"))
    return entries


def timed(function: Any, *args: Any) -> tuple[float, Any]:
    start = time.process_time()
    result = function(*args)
    return time.process_time() - start, result


def verification_ratios(machine: Any, events: list[dict[str, Any]], rounds: int, profile: bool) -> int:
    """Bare fold vs fold + hash (plain, StateHasher) vs verify_log / replay(verify=True), interleaved."""
    entries = record_log(machine, events)
    cpu = time.process_time  # this process's CPU time: on a shared machine, wall time measures the neighbours
    modes: dict[str, Any] = {
        "bare fold": lambda: fold_python(machine, events, False, clock=cpu)[0],
        "fold + hash (plain)": lambda: fold_python(machine, events, True, clock=cpu)[0],
    }
    if check_state_hash is not None:
        recorded = [entry["verification"]["stateHash"] for entry in entries[1:]]
        modes["fold + check_state_hash"] = lambda: fold_checked(machine, events, recorded, cpu)
        if BATCH is not None:
            modes[f"fold + hash, {BATCH} at a time"] = lambda: fold_checked_in_batches(machine, events, recorded, cpu)
        if next_snapshot is not None:
            modes["the verifying step"] = lambda: fold_verifying_step(machine, events, recorded, cpu)
    modes["fold() over the log (no check)"] = lambda: timed(_drain, machine, entries)[0]
    reports: list[Any] = []
    modes["verify_log"] = lambda: _keep(reports, timed(verify_log, machine, entries))
    modes["replay(verify=True)"] = lambda: timed(replay, machine, entries)[0]
    best = dict.fromkeys(modes, float("inf"))
    for _ in range(rounds):
        for name, run in modes.items():
            best[name] = min(best[name], run())
    bare = best["bare fold"]
    print(f"\nverification: {len(events):,} events (+ init), CPU time, best of {rounds} interleaved rounds; "
          "ratios to the bare fold of the same run")
    print(f"{'mode':<32}{'ev/s':>12}{'x bare fold':>13}")
    for name, seconds in best.items():
        print(f"{name:<32}{len(events) / seconds:>12,.0f}{bare / seconds:>12.2f}x")
    report = reports[-1]
    print(f"verify_log: {report}")
    if profile:
        import cProfile
        import pstats

        for label, statement in (
            ("fold + hash (plain state_hash)", lambda: fold_python(machine, events, True)),
            ("verify_log", lambda: verify_log(machine, entries)),
        ):
            print(f"\n--- cProfile: {label} (top 12 by own time) ---")
            profiler = cProfile.Profile()
            profiler.runcall(statement)
            pstats.Stats(profiler).sort_stats("tottime").print_stats(12)
    return 0 if report.ok else 1


def _drain(machine: Any, entries: list[dict[str, Any]]) -> None:
    for _ in fold(machine, entries, errors="record"):  # what verify_log folds with, checking nothing
        pass


def _keep(reports: list[Any], result: tuple[float, Any]) -> float:
    reports.append(result[1])
    return float(result[0])


def run_node(events_path: Path) -> dict[str, Any] | None:
    node = shutil.which("node")
    if node is None or not (ROOT / "tests" / "node" / "node_modules" / "xstate").is_dir():
        return None
    proc = subprocess.run([node, str(ROOT / "benchmarks" / "node" / "fold.mjs"), str(events_path)],
                          capture_output=True, text=True, check=True, timeout=900)
    return json.loads(proc.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds per side; the best is kept")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-node", action="store_true", help="skip the XState comparison (verification ratios only)")
    parser.add_argument("--profile", action="store_true", help="cProfile the hashed fold and verify_log")
    args = parser.parse_args()

    machine = build_machine()
    events = make_events(args.events, args.seed)
    fold_python(machine, events[:2000], False)  # warm the configuration caches
    if args.no_node:
        return verification_ratios(machine, events, args.rounds, args.profile)
    with tempfile.TemporaryDirectory() as tmp:
        events_path = Path(tmp) / "events.json"
        events_path.write_text(json.dumps(events))
        # Rounds interleave the two sides (Node, then Python plain and hashed); each side keeps its
        # best, so a burst of load on this shared machine does not land on one side only.
        fold_python(machine, events[:2000], False)  # warm the configuration caches like Node's JIT warm-up
        node_runs = []
        plains, hasheds = [], []
        for _ in range(args.rounds):
            node_runs.append(run_node(events_path))
            plains.append(fold_python(machine, events, False))
            hasheds.append(fold_python(machine, events, True))
        plain = min(plains, key=lambda r: r[0])
        hashed = min(hasheds, key=lambda r: r[0])
    node_result = None
    if all(r is not None for r in node_runs):
        node_result = dict(node_runs[0])  # type: ignore[arg-type]
        for mode in ("plain", "hashed"):
            node_result[mode] = max((r[mode] for r in node_runs), key=lambda m: m["eventsPerSecond"])  # type: ignore[index]

    py_plain = len(events) / plain[0]
    py_hashed = len(events) / hashed[0]
    print(f"fold benchmark: {len(events):,} events, agent loop machine (seed {args.seed})")
    print(f"{'mode':<22}{'python ev/s':>14}{'xstate ev/s':>14}{'python/xstate':>15}")
    if node_result is None:
        print(f"{'transition':<22}{py_plain:>14,.0f}{'n/a':>14}{'n/a':>15}")
        print(f"{'transition + hash':<22}{py_hashed:>14,.0f}{'n/a':>14}{'n/a':>15}")
        print("(node or tests/node/node_modules missing: XState side skipped)")
        return verification_ratios(machine, events, args.rounds, args.profile)
    js_plain = node_result["plain"]["eventsPerSecond"]
    js_hashed = node_result["hashed"]["eventsPerSecond"]
    print(f"{'transition':<22}{py_plain:>14,.0f}{js_plain:>14,.0f}{py_plain / js_plain:>14.2f}x")
    print(f"{'transition + hash':<22}{py_hashed:>14,.0f}{js_hashed:>14,.0f}{py_hashed / js_hashed:>14.2f}x")
    same = node_result["finalHash"] == hashed[2]
    print(f"xstate {node_result['xstate']} on node {node_result['node']}; "
          f"final state hashes {'agree' if same else 'DIFFER'}: {hashed[2]}")
    if not same:
        print("python:", json.dumps(machine.get_persisted_snapshot(hashed[1]), sort_keys=True)[:2000])
        print("xstate:", json.dumps(node_result["finalPersisted"], sort_keys=True)[:2000])
        return 1
    return verification_ratios(machine, events, args.rounds, args.profile)


if __name__ == "__main__":
    raise SystemExit(main())
