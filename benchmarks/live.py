"""Live following: how soon an append made by a writer shows up at each stage of a watcher, and what watching costs.

    .venv/bin/python benchmarks/live.py                  # memory, SQLite, PostgreSQL (its own cluster if no DSN)
    .venv/bin/python benchmarks/live.py --pg DSN         # PostgreSQL at DSN (a throwaway schema is dropped after)
    .venv/bin/python benchmarks/live.py --quick          # fewer appends, shorter phases (a smoke run)
    .venv/bin/python benchmarks/live.py --stores sqlite --appends 400 --interval 0.05

For each store, three phases, the writer in a separate PROCESS (memory: a thread with its own event loop, as
the in-memory store cannot be shared between processes):
  latency    single-entry appends at random intervals (mean --interval s); for each, the time from `append`
             returning in the writer to the entry being observed at each stage; p50/p95/max. Baseline in the
             same run: the writer also sends each timestamp over a pipe, and the pipe's own delivery time
             (writer -> this process, same clock) is the floor any cross-process signal pays on this machine.
  idle CPU   the watcher's process CPU seconds per wall second while nothing is appended, beside an idle
             event loop alone (the baseline, same process, same duration).
  sustained  the writer appends 20-entry batches as fast as it can for --sustain s (and a run paced at
             2,000 entries/s); the watcher follows if its lag does not grow: max latency over the last
             second under 1 s.
Stages: "store" (entries yielded by `store.watch`). A stage is an `Observer` (see STAGES): later stages (in the
explorer, Python side; in the browser) plug in there and are measured by the same harness.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_explorer.stores.base import EventLogStore
from agent_explorer.stores.memory import InMemoryEventLogStore
from agent_explorer.stores.sqlite import SqliteEventLogStore

GOALS_P95 = {"memory": 0.100, "sqlite": 0.250, "postgres": 0.100}  # seconds, the goals (store stage)
GOAL_SUSTAINED_SQLITE = 2000  # entries/s followed without falling behind
clock = time.monotonic  # CLOCK_MONOTONIC: one clock for every process on the machine


def entry(index: int) -> dict[str, Any]:
    """A typical entry (~350 bytes of JSON): an actor completion with a short text output."""
    return {
        "schemaVersion": 1, "id": uuid.uuid4().hex, "index": index,
        "recordedAt": "2026-11-30T04:00:00.000Z", "machineId": "support-agent", "machineVersion": "3",
        "event": {"type": "xstate.done.actor.draft", "output": {"text": f"Reply number {index}: thanks, we refunded the order."}},
        "causationId": "req-1", "verification": {"stateHash": "5f" * 32},
    }


# --- stages: where an entry is observed -------------------------------------------------------------------

Seen = Callable[[int, float], None]  # (entries visible so far at this stage, time)


class Observer:
    """One stage of following: runs until cancelled, calling `seen(length, t)` whenever entries up to
    `length` become visible at this stage. `open_store` makes a store of its own for it."""

    name = "?"

    async def run(self, open_store: Callable[[], EventLogStore], thread_id: str, start: int, seen: Seen) -> None:
        raise NotImplementedError


class StoreStage(Observer):
    """Entries yielded by `store.watch` in this process."""

    name = "store"

    async def run(self, open_store: Callable[[], EventLogStore], thread_id: str, start: int, seen: Seen) -> None:
        store = open_store()
        try:
            async for batch in store.watch(thread_id, from_index=start):
                seen(batch[-1]["index"] + 1, clock())
        finally:
            await store.aclose()


# The lead adds "explorer" (Explorer.from_store(..., follow=True): entries folded, Python side) and
# "browser" (the widget shows them) as Observers here; the harness below measures them the same way.
STAGES: dict[str, Callable[[], Observer]] = {"store": StoreStage}


# --- the writer ---------------------------------------------------------------------------------------------


def open_kind(kind: str, target: str, schema: str) -> EventLogStore:
    if kind == "sqlite":
        return SqliteEventLogStore(target)
    from agent_explorer.stores.postgres import PostgresEventLogStore

    return PostgresEventLogStore(target, schema=schema, max_size=2)


async def write(store: EventLogStore, thread_id: str, plan: dict[str, Any], ack: Callable[[int, float], None]) -> None:
    """Append per `plan` (mode latency / flood / paced), calling `ack(new_length, t)` after each append returns."""
    rng = random.Random(plan.get("seed", 1))
    length = await store.length(thread_id)
    mode = plan["mode"]
    if mode == "latency":
        for _ in range(plan["appends"]):
            await asyncio.sleep(rng.uniform(0, 2 * plan["interval"]))
            length = await store.append(thread_id=thread_id, expected_index=length, entries=[entry(length)])
            ack(length, clock())
        return
    size, deadline = plan["batch"], clock() + plan["seconds"]
    pace = size / plan["rate"] if mode == "paced" else 0.0
    next_at = clock()
    while clock() < deadline:
        length = await store.append(thread_id=thread_id, expected_index=length, entries=[entry(length + k) for k in range(size)])
        ack(length, clock())
        if pace:
            next_at += pace
            await asyncio.sleep(max(0.0, next_at - clock()))


def writer_main(argv: list[str]) -> None:
    """`live.py --writer KIND TARGET SCHEMA THREAD PLAN_JSON`: the writer process; prints `ACK length t`."""
    kind, target, schema, thread_id, plan_json = argv

    async def run() -> None:
        store = open_kind(kind, target, schema)
        await store.length(thread_id)  # connected before READY
        print("READY", flush=True)
        sys.stdin.readline()  # GO
        out = sys.stdout

        def ack(length: int, t: float) -> None:
            out.write(f"ACK {length} {t!r} \n")
            out.flush()

        await write(store, thread_id, json.loads(plan_json), ack)
        print("DONE", flush=True)
        await store.aclose()

    asyncio.run(run())


# --- the harness ----------------------------------------------------------------------------------------------


@dataclass
class Run:
    acks: list[tuple[int, float, float]] = field(default_factory=list)  # (length, t_returned, t_piped)
    seen: dict[str, list[tuple[int, float]]] = field(default_factory=dict)  # stage -> [(length, t)]

    def latencies(self, stage: str) -> list[float]:
        """For each append: first time its last entry was visible at `stage`, minus when append returned."""
        points, out, j = self.seen.get(stage, []), [], 0
        for length, returned, _ in self.acks:
            while j < len(points) and points[j][0] < length:
                j += 1
            if j == len(points):
                break
            out.append(points[j][1] - returned)
        return out

    def pipe_floor(self) -> list[float]:
        return [piped - returned for _, returned, piped in self.acks if piped]


class Process:
    """The writer process, started and connected before measuring (its start-up is never measured)."""

    def __init__(self, kind: str, target: str, schema: str, thread_id: str, plan: dict[str, Any], run: Run) -> None:
        self.run = run
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--writer", kind, target, schema, thread_id, json.dumps(plan)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
        )
        assert self.proc.stdout is not None and self.proc.stdin is not None
        line = self.proc.stdout.readline()
        if line.strip() != "READY":
            raise RuntimeError(f"the writer did not start: {line!r}")
        self.done = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("ACK "):
                _, length, returned = line.split()
                self.run.acks.append((int(length), float(returned), clock()))
            elif line.startswith("DONE"):
                break
        self.done.set()

    def go(self) -> None:
        assert self.proc.stdin is not None
        self._reader.start()
        self.proc.stdin.write("GO\n")
        self.proc.stdin.flush()

    async def finished(self) -> None:
        while not self.done.is_set():
            await asyncio.sleep(0.02)
        self.proc.wait(60)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.stdout.close()


class ThreadWriter:
    """The memory store's writer: a thread with an event loop of its own, appending to the shared store."""

    def __init__(self, store: EventLogStore, thread_id: str, plan: dict[str, Any], run: Run) -> None:
        self.run = run

        def ack(length: int, t: float) -> None:
            run.acks.append((length, t, 0.0))

        self._thread = threading.Thread(target=lambda: asyncio.run(write(store, thread_id, plan, ack)), daemon=True)

    def go(self) -> None:
        self._thread.start()

    async def finished(self) -> None:
        while self._thread.is_alive():
            await asyncio.sleep(0.02)


class _Shared(EventLogStore):
    """A second handle on one memory store, so an observer's `aclose` does not end the writer's store."""

    def __init__(self, inner: EventLogStore) -> None:
        self._inner = inner

    def watch(self, thread_id: str, from_index: int = 0) -> Any:
        return self._inner.watch(thread_id, from_index)

    async def append(self, **kwargs: Any) -> int:
        return await self._inner.append(**kwargs)

    async def read_raw(self, *args: Any, **kwargs: Any) -> list[str]:
        return await self._inner.read_raw(*args, **kwargs)

    async def length(self, thread_id: str) -> int:
        return await self._inner.length(thread_id)

    async def fork(self, **kwargs: Any) -> int:
        return await self._inner.fork(**kwargs)

    async def list_threads(self, **kwargs: Any) -> Any:
        return await self._inner.list_threads(**kwargs)


@dataclass
class Backend:
    kind: str
    target: str = ""
    schema: str = ""
    memory: EventLogStore | None = None

    def open(self) -> EventLogStore:
        if self.kind == "memory":
            assert self.memory is not None
            return _Shared(self.memory)
        return open_kind(self.kind, self.target, self.schema)

    def writer(self, thread_id: str, plan: dict[str, Any], run: Run) -> Process | ThreadWriter:
        if self.kind == "memory":
            assert self.memory is not None
            return ThreadWriter(self.memory, thread_id, plan, run)
        return Process(self.kind, self.target, self.schema, thread_id, plan, run)


async def measure(backend: Backend, stages: list[str], plan: dict[str, Any]) -> Run:
    """Seed a fresh thread, start every stage's observer, let the writer go, wait until all saw everything."""
    thread_id = f"live-{uuid.uuid4().hex[:8]}"
    seed_store = backend.open()
    await seed_store.append(thread_id=thread_id, expected_index=0, entries=[entry(0)])
    await seed_store.aclose()
    run = Run()
    caught_up = {name: asyncio.Event() for name in stages}
    tasks = []
    for name in stages:
        points: list[tuple[int, float]] = []
        run.seen[name] = points

        def seen(length: int, t: float, points: list[tuple[int, float]] = points, name: str = name) -> None:
            points.append((length, t))
            caught_up[name].set()

        tasks.append(asyncio.ensure_future(STAGES[name]().run(backend.open, thread_id, 0, seen)))
    await asyncio.wait_for(asyncio.gather(*(event.wait() for event in caught_up.values())), 60)  # the seed: all listening
    writer = backend.writer(thread_id, plan, run)
    writer.go()
    await writer.finished()
    final = run.acks[-1][0]
    deadline = clock() + 60
    while any(not run.seen[name] or run.seen[name][-1][0] < final for name in stages) and clock() < deadline:
        await asyncio.sleep(0.01)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return run


async def idle_cpu(backend: Backend, seconds: float) -> tuple[float, float]:
    """(watcher's CPU s per wall s while nothing is appended, an idle event loop's over the same time)."""
    thread_id = f"idle-{uuid.uuid4().hex[:8]}"
    store = backend.open()
    await store.append(thread_id=thread_id, expected_index=0, entries=[entry(0)])
    watcher = store.watch(thread_id)
    await anext(watcher)
    pending = asyncio.ensure_future(anext(watcher))
    await asyncio.sleep(1.0)  # let a polling backend back off to its idle interval
    cpu, wall = time.process_time(), clock()
    await asyncio.sleep(seconds)
    watching = (time.process_time() - cpu) / (clock() - wall)
    pending.cancel()
    await asyncio.gather(pending, return_exceptions=True)
    await watcher.aclose()
    await store.aclose()
    cpu, wall = time.process_time(), clock()
    await asyncio.sleep(seconds)
    baseline = (time.process_time() - cpu) / (clock() - wall)
    return watching, baseline


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(q * (len(ordered) - 1)))))]


def ms(value: float) -> str:
    return f"{value * 1000:,.1f} ms"


class Table:
    def __init__(self) -> None:
        self.rows: list[list[str]] = []

    def add(self, *cells: str) -> None:
        self.rows.append(list(cells))
        print("  " + " | ".join(cells), flush=True)

    def markdown(self, header: list[str]) -> str:
        return "\n".join([f"| {' | '.join(header)} |", "|" + "---|" * len(header), *(f"| {' | '.join(r)} |" for r in self.rows)])


async def bench(backend: Backend, stages: list[str], args: argparse.Namespace, tables: dict[str, Table]) -> None:
    kind = backend.kind
    run = await measure(backend, stages, {"mode": "latency", "appends": args.appends, "interval": args.interval, "seed": 7})
    floor = run.pipe_floor()
    for name in stages:
        values = run.latencies(name)
        goal = GOALS_P95[kind] if name == "store" else None
        p95 = pct(values, 0.95)
        verdict = "" if goal is None else (f"< {ms(goal)}: " + ("ok" if p95 < goal else "MISSED"))
        tables["latency"].add(kind, name, f"{len(values)}", ms(pct(values, 0.5)), ms(p95), ms(max(values)),
                              f"{ms(pct(floor, 0.5))} / {ms(pct(floor, 0.95))}" if floor else "- (same process)", verdict)
    watching, baseline = await idle_cpu(backend, args.idle)
    tables["idle"].add(kind, f"{watching * 100:.3f} %", f"{baseline * 100:.3f} %", f"{(watching - baseline) * 100:+.3f} %")
    for mode, plan in (("as fast as the writer can", {"mode": "flood", "batch": 20, "seconds": args.sustain}),
                       ("paced at 2,000/s", {"mode": "paced", "batch": 20, "rate": 2000, "seconds": args.sustain})):
        run = await measure(backend, ["store"], plan)
        values = run.latencies("store")
        first, last = run.acks[0], run.acks[-1]
        rate = (last[0] - first[0]) / max(last[1] - first[1], 1e-9)
        tail = [v for (_, returned, _), v in zip(run.acks, values) if returned > last[1] - 1.0]
        followed = bool(tail) and max(tail) < 1.0 and len(values) == len(run.acks)
        goal = ""
        if kind == "sqlite":
            goal = f">= {GOAL_SUSTAINED_SQLITE:,}/s followed: " + ("ok" if followed and rate >= GOAL_SUSTAINED_SQLITE * 0.98 else "MISSED")
        tables["sustained"].add(kind, mode, f"{rate:,.0f}", ms(pct(values, 0.5)), ms(pct(values, 0.95)),
                                ms(max(tail) if tail else float("nan")), "yes" if followed else "FELL BEHIND", goal)


@contextlib.contextmanager
def postgres(dsn: str | None) -> Any:
    """The DSN given, else a throwaway cluster of our own (scripts/pg_cluster.sh), else None."""
    if dsn:
        yield dsn
        return
    has_binaries = shutil.which("initdb") or list(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not has_binaries:
        yield None
        return
    directory = tempfile.mkdtemp(prefix="agent-explorer-live-pg-")
    script = ROOT / "scripts" / "pg_cluster.sh"
    try:
        started = subprocess.run(["bash", str(script), "start", directory], capture_output=True, text=True, timeout=120)
        if started.returncode != 0:
            print(f"  postgres  could not start a cluster: {started.stderr.strip()}")
            yield None
            return
        yield started.stdout.strip()
    finally:
        subprocess.run(["bash", str(script), "stop", directory], capture_output=True, text=True, timeout=120)
        shutil.rmtree(directory, ignore_errors=True)


async def drop(dsn: str, schema: str) -> None:
    import psycopg
    from psycopg import sql

    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pg", default=os.environ.get("AGENT_EXPLORER_TEST_PG_DSN"), help="PostgreSQL DSN (default: $AGENT_EXPLORER_TEST_PG_DSN, else a cluster of its own)")
    parser.add_argument("--stores", default="memory,sqlite,postgres")
    parser.add_argument("--stages", default="store", help=f"comma-separated, of {', '.join(STAGES)}")
    parser.add_argument("--appends", type=int, default=300, help="single-entry appends in the latency phase")
    parser.add_argument("--interval", type=float, default=0.1, help="mean seconds between them (uniform in [0, 2x])")
    parser.add_argument("--idle", type=float, default=5.0, help="seconds of the idle-CPU phase")
    parser.add_argument("--sustain", type=float, default=5.0, help="seconds of each sustained phase")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.appends, args.idle, args.sustain = 60, 2.0, 2.0
    stages = args.stages.split(",")
    kinds = args.stores.split(",")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"live benchmark: {args.appends} appends ~{args.interval:g} s apart, idle {args.idle:g} s, sustained {args.sustain:g} s; "
          f"stages {', '.join(stages)}; load average {load:.1f}")
    tables = {"latency": Table(), "idle": Table(), "sustained": Table()}
    if "memory" in kinds:
        await bench(Backend("memory", memory=InMemoryEventLogStore()), stages, args, tables)
    if "sqlite" in kinds:
        with tempfile.TemporaryDirectory(prefix="agent-explorer-live-") as directory:
            await bench(Backend("sqlite", target=os.path.join(directory, "live.db")), stages, args, tables)
    if "postgres" in kinds:
        with postgres(args.pg) as dsn:
            if dsn is None:
                print("  postgres  skipped: no DSN and no PostgreSQL binaries (initdb, pg_ctl) to start a cluster")
            else:
                schema = f"live_{uuid.uuid4().hex[:10]}"
                try:
                    await bench(Backend("postgres", target=dsn, schema=schema), stages, args, tables)
                finally:
                    await drop(dsn, schema)
    print()
    print(tables["latency"].markdown(["store", "stage", "appends", "p50", "p95", "max", "pipe floor p50 / p95", "goal (p95)"]))
    print()
    print(tables["idle"].markdown(["store", "watcher CPU (of one core)", "idle loop alone", "difference"]))
    print()
    print(tables["sustained"].markdown(["store", "writer", "entries/s written", "latency p50", "p95", "max, last second", "followed", "goal"]))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--writer":
        writer_main(sys.argv[2:])
    else:
        asyncio.run(main())
