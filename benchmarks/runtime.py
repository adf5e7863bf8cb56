"""Runtime figures (not a test): run_agent throughput per store, resume cost vs log length, the
step-path loop with and without the incremental fold, parse_agent_event per payload.

Run: `.venv/bin/python benchmarks/runtime.py` from the repository root. Prints figures and same-run
ratios (machines share CPU, so absolute numbers drift; ratios are the comparable part). The machines
are the runtime test suite's (tests/runtime/machines.py).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

from runtime.machines import FULL_INPUT, USAGE, approval_machine, full_machine

from agent_explorer.runtime import ScriptedModel, parse_agent_event, run_agent
from agent_explorer.runtime import effects as effects_module
from agent_explorer.steps import (
    create_replay_entry,
    get_agent_effects,
    init_entry,
    initial_transition,
    transition,
)
from agent_explorer.stores import SqliteEventLogStore, create_in_memory_event_log_store


def fast_full_model() -> ScriptedModel:
    text = "A draft about tides"
    return ScriptedModel(
        {"Draft about facts about tides": text, f"Branch for {text}": "branch text"},
        decisions={f"Judge: {text}": ["REVISE", "ACCEPT"]},
        usage=USAGE,
    )


async def throughput(kind: str, runs: int) -> tuple[float, float]:
    directory = tempfile.mkdtemp()
    store: Any = None
    if kind == "memory":
        store = create_in_memory_event_log_store()
    elif kind == "sqlite":
        store = SqliteEventLogStore(os.path.join(directory, "bench.db"))
    entries = 0
    started = time.perf_counter()
    for i in range(runs):
        extra = {} if store is None else {"store": store, "thread_id": f"t{i}"}
        result = await run_agent(full_machine, input=FULL_INPUT, executors=fast_full_model(), timers="run",
                                 time_scale=0.0, machine_ref="bench:full", **extra)
        assert result.status == "done"
        entries += len(result.events)
    elapsed = time.perf_counter() - started
    if kind == "sqlite":
        await store.aclose()
    return runs / elapsed, entries / elapsed


async def resume_cost(length: int) -> float:
    model = ScriptedModel({"Reply to x": "r"})
    result = await run_agent(approval_machine, input={"q": "x"}, executors=model, machine_ref="bench:a")
    events = result.events
    while len(events) < length:
        result = await run_agent(approval_machine, events=events, event={"type": "REJECT"}, executors=model,
                                 machine_ref="bench:a")
        events = result.events
    started = time.perf_counter()
    for _ in range(5):
        await run_agent(approval_machine, events=events, event={"type": "REJECT"}, executors=model, machine_ref="bench:a")
    return (time.perf_counter() - started) / 5 * 1000


def step_loop(steps: int, *, cached: bool) -> float:
    entries = [init_entry(approval_machine, input={"q": "x"})]
    snapshot, actions = initial_transition(approval_machine, input={"q": "x"})
    started = time.perf_counter()
    for _ in range(steps):
        if not cached:
            effects_module._FOLDS.clear()  # what every call would cost without the fold cache
        effects = get_agent_effects(approval_machine, snapshot, actions, history=entries)
        owed = [e for e in effects if e.kind != "execute"]
        event = owed[0].to_done_event({"text": "r"}) if owed else {"type": "REJECT"}
        snapshot, actions = transition(approval_machine, snapshot, event)
        entries.append(create_replay_entry(approval_machine, event, len(entries), snapshot_after=snapshot))
    return (time.perf_counter() - started) / steps * 1000


def parse_cost(count: int) -> float:
    payload = {"type": "APPROVE", "note": "  fine  ", "score": 3}
    started = time.perf_counter()
    for _ in range(count):
        parse_agent_event(approval_machine, payload)
    return (time.perf_counter() - started) / count * 1e6


async def main() -> None:
    print("run_agent, full machine (task, text, decision, timer, 3-way fan-out; 14 entries a run):")
    base_runs, base_entries = await throughput("none", 60)
    print(f"  no store: {base_runs:8.1f} runs/s  {base_entries:9.1f} entries/s")
    for kind, runs in (("memory", 60), ("sqlite", 10)):
        per_run, per_entry = await throughput(kind, runs)
        print(f"  {kind:8}: {per_run:8.1f} runs/s  {per_entry:9.1f} entries/s  ({base_runs / per_run:5.1f}x slower than no store)")
    print("resume (read + one fold + tail hash + one event), approval machine:")
    small = await resume_cost(200)
    large = await resume_cost(2000)
    print(f"  200 entries: {small:7.1f} ms   2000 entries: {large:7.1f} ms   ratio {large / small:4.1f} (linear would be 10)")
    print("step-path host loop (get_agent_effects with the journal each step), 1000 steps:")
    with_cache = step_loop(1000, cached=True)
    without = step_loop(1000, cached=False)
    print(f"  incremental fold: {with_cache:6.3f} ms/step   refold each step: {without:6.3f} ms/step   ratio {without / with_cache:5.1f}x")
    print(f"parse_agent_event with a pydantic schema: {parse_cost(20000):6.1f} us/payload")


if __name__ == "__main__":
    asyncio.run(main())
