"""Live following: how soon an append made by a writer shows up at each stage of a watcher, and what watching costs.

    .venv/bin/python benchmarks/live.py                  # every store, every stage (PostgreSQL: its own cluster if no DSN)
    .venv/bin/python benchmarks/live.py --pg DSN         # PostgreSQL at DSN (a throwaway schema is dropped after)
    .venv/bin/python benchmarks/live.py --quick          # fewer appends, shorter phases (a smoke run)
    .venv/bin/python benchmarks/live.py --stores sqlite --stages store,explorer --appends 400 --interval 0.05

For each store and each stage, three phases, the writer in a separate PROCESS (memory: a thread with its own event
loop, as the in-memory store cannot be shared between processes; for the browser stage that thread runs in the
notebook's kernel, where the store is). Each stage is measured in a pass of its own, so stages never load each other:
  latency    single-entry appends at random intervals (mean --interval s); for each, the time from `append`
             returning in the writer to the entry being observed at the stage; p50/p95/max. Baseline in the
             same run: the writer also sends each timestamp over a pipe, and the pipe's own delivery time
             (writer -> this process, same clock) is the floor any cross-process signal pays on this machine;
             for the browser stage, the bare widget's latency.
  idle CPU   the watcher's process CPU seconds per wall second while nothing is appended, beside an idle
             event loop alone (the baseline, same process, same duration); store and explorer stages.
  sustained  the writer appends 20-entry batches as fast as it can for --sustain s (and a run paced at
             2,000 entries/s); the stage followed if its lag did not grow: max latency over the last
             second under 1 s.
Stages (`STAGES`, each an `Observer`):
  store      entries yielded by `store.watch` in this process.
  explorer   `Explorer.from_store(store, thread, MACHINE, follow=True)` in this process: the entry is in the explorer,
             Python side (its `length` traitlet changed: folded, hash-checked, indexed), timed on the follow thread.
  browser    the same explorer in a notebook of a real JupyterLab (started here, on 127.0.0.1) in headless Chromium
             (/usr/bin/chromium, Playwright): the widget shows it (a MutationObserver on the slider's `max`).
  bare widget  the browser stage's floor, run with it in a pass of its own: an anywidget showing one number, set
             by a kernel thread following the same watch (wake-up, comm and page; no fold, views or drawing).
The log is a real one: an init entry at 0, then host events folded through MACHINE (a two-state machine), each
carrying its true stateHash (the stages check them all; a pass that saw a divergence is an error).

Clocks. Writer and stages time with CLOCK_MONOTONIC (`time.monotonic`), one clock for every process on the machine,
the kernel's writer thread included. The page has no such clock: it stamps each change with its wall clock in
milliseconds (`performance.timeOrigin + performance.now()`), and the harness converts page times onto CLOCK_MONOTONIC
with an offset measured just before the writer starts: 20 round trips to the page (`page.evaluate`), keeping the
shortest, whose midpoint maps the page's clock onto ours to within half that round trip (printed as "clock +-").
As a check it also prints how far the page's wall clock is from this process's (`time.time()`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_explorer.canonical.jcs import state_hash
from agent_explorer.engine import initial_transition, setup, transition
from agent_explorer.eventlog.entries import init_entry
from agent_explorer.stores.base import EventLogStore
from agent_explorer.stores.memory import InMemoryEventLogStore
from agent_explorer.stores.sqlite import SqliteEventLogStore

GOALS_P95 = {"memory": 0.100, "sqlite": 0.250, "postgres": 0.100}  # seconds, the goals (every stage)
GOAL_SUSTAINED_SQLITE = 2000  # entries/s followed without falling behind
clock = time.monotonic  # CLOCK_MONOTONIC: one clock for every process on the machine
CHROMIUM = Path(os.environ.get("AGENT_EXPLORER_CHROMIUM", "/usr/bin/chromium"))

# --- the followed run: a tiny machine, folded for real ---------------------------------------------------------

MACHINE = setup().create_machine({
    "id": "live-bench", "version": "1", "context": {"ticket": "T-1042", "replies": "kept in the log"},
    "initial": "drafting",
    "states": {"drafting": {"on": {"REPLY": "reviewing"}}, "reviewing": {"on": {"REPLY": "drafting"}}},
})


def _reply(index: int) -> dict[str, Any]:
    return {"type": "REPLY", "text": f"Reply number {index}: thanks for writing in, we refunded the order."}


def _hashes() -> tuple[str, str]:
    """The stateHash after an odd and after an even number of replies: the context never changes, so the state
    alternates between two snapshots (checked over four steps, so the period is real, not assumed)."""
    snapshot, _ = initial_transition(MACHINE)
    seen = []
    for i in range(1, 5):
        snapshot, _ = transition(MACHINE, snapshot, _reply(i))
        seen.append(state_hash(MACHINE.get_persisted_snapshot(snapshot)))
    assert seen[0] == seen[2] and seen[1] == seen[3] and seen[0] != seen[1], "MACHINE is not 2-periodic"
    return seen[0], seen[1]


HASHES = _hashes()
INIT = init_entry(MACHINE, metadata={"executionId": "live-bench"})


def entry(index: int) -> dict[str, Any]:
    """Entry `index` of the run (~330 bytes of JSON, like a typical host event): the init entry at 0, then replies,
    each with the true stateHash of the state it leads to."""
    if index == 0:
        return {**INIT, "id": uuid.uuid4().hex}
    return {
        "schemaVersion": 1, "id": uuid.uuid4().hex, "index": index,
        "recordedAt": "2026-11-30T04:00:00.000Z", "machineId": "live-bench", "machineVersion": "1",
        "event": _reply(index), "verification": {"stateHash": HASHES[(index - 1) % 2]},
    }


# --- stages: where an entry is observed -------------------------------------------------------------------

Seen = Callable[[int, float], None]  # (entries visible so far at this stage, time)


class Observer:
    """One stage of following: `run` observes until cancelled, calling `seen(length, t)` (on the harness's loop)
    whenever entries up to `length` become visible at this stage, and raises if what it saw does not verify.
    `seed` and `writer` say where the thread is started and written (by default: the backend's own)."""

    name = "?"

    async def run(self, backend: Backend, thread_id: str, seen: Seen) -> None:
        raise NotImplementedError

    async def seed(self, backend: Backend, thread_id: str) -> None:
        store = backend.open()
        await store.append(thread_id=thread_id, expected_index=0, entries=[entry(0)])
        await store.aclose()

    def writer(self, backend: Backend, thread_id: str, plan: dict[str, Any], run: Run) -> Writer:
        return backend.writer(thread_id, plan, run)


class StoreStage(Observer):
    """Entries yielded by `store.watch` in this process."""

    name = "store"

    async def run(self, backend: Backend, thread_id: str, seen: Seen) -> None:
        store = backend.open()
        try:
            async for batch in store.watch(thread_id, from_index=0):
                seen(batch[-1]["index"] + 1, clock())
        finally:
            await store.aclose()


class ExplorerStage(Observer):
    """`Explorer.from_store(..., follow=True)` in this process: the entry is in the explorer once its `length`
    traitlet changed, i.e. the batch was folded, hash-checked and indexed (timed on the follow thread itself)."""

    name = "explorer"

    async def run(self, backend: Backend, thread_id: str, seen: Seen) -> None:
        from agent_explorer import Explorer

        loop = asyncio.get_running_loop()
        store = backend.open()
        ex = Explorer.from_store(store, thread_id, MACHINE, follow=True)

        def grew(change: Any) -> None:
            loop.call_soon_threadsafe(seen, change["new"], clock())

        ex.observe(grew, names="length")
        seen(len(ex), clock())
        try:
            await asyncio.Event().wait()
        finally:
            ex.follow(False)
            try:
                check_verified(ex.verification, len(ex))
            finally:
                await store.aclose()


def check_verified(verification: dict[str, Any], length: int) -> None:
    if verification.get("status") != "ok" or verification.get("checked") != length:
        raise RuntimeError(f"the followed log did not verify: {verification}")


class BrowserStage(Observer):
    """The explorer in a JupyterLab notebook, in headless Chromium: the widget shows the entry once its slider's
    `max` changed (a MutationObserver, stamped with the page's clock and converted; see "Clocks" above)."""

    name = "browser"
    lab: Lab | None = None  # started once by main() when this stage is asked for

    def __init__(self) -> None:
        self.page: Any = None
        self.offset = 0.0  # page seconds - CLOCK_MONOTONIC seconds

    async def seed(self, backend: Backend, thread_id: str) -> None:
        if backend.kind != "memory":
            await super().seed(backend, thread_id)
        # memory: the store lives in the kernel, which seeds it (see `run`)

    def writer(self, backend: Backend, thread_id: str, plan: dict[str, Any], run: Run) -> Writer:
        if backend.kind == "memory":
            return KernelWriter(self, thread_id, plan, run)
        return backend.writer(thread_id, plan, run)

    def _open_code(self, backend: Backend, thread_id: str) -> str:
        if backend.kind == "memory":
            return ("store = bench.InMemoryEventLogStore()\n"
                    f"store.sync.append(thread_id={thread_id!r}, expected_index=0, entries=[bench.entry(0)])")
        return f"store = bench.open_kind({backend.kind!r}, {backend.target!r}, {backend.schema!r})"

    def cells(self, thread_id: str) -> list[str]:
        return [f"ex = Explorer.from_store(store, {thread_id!r}, bench.MACHINE, follow=True)\nex"]

    # what the page watches: (the element, the mutations to observe, the length it shows, as JS expressions)
    watched = ('.ae-root [data-testid="slider"]', '{attributes: true, attributeFilter: ["max"]}', "Number(el.max) + 1")
    ready = '.ae-root[data-ready="true"]'  # the page is measured once this is drawn

    async def run(self, backend: Backend, thread_id: str, seen: Seen) -> None:
        lab = self.lab
        assert lab is not None, "main() starts the lab before a browser stage runs"
        name = f"{thread_id}.ipynb"
        lab.notebook(name, [
            f"import sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\nimport live as bench\n"
            f"from agent_explorer import Explorer\n{self._open_code(backend, thread_id)}",
            *self.cells(thread_id),
        ])
        selector, options, length = self.watched
        self.page = page = await lab.open(name, self.ready)
        try:
            await page.evaluate(f"""() => {{
                const el = document.querySelector({json.dumps(selector)});
                window.__aeSeen = [];
                const note = () => window.__aeSeen.push([{length}, performance.timeOrigin + performance.now()]);
                new MutationObserver(note).observe(el, {options});
                note();
            }}""")
            self.offset, lab.clock_error, lab.wall_skew = await calibrate(page)
            while True:
                for shown, at in await page.evaluate("() => window.__aeSeen.splice(0)"):
                    seen(int(shown), at / 1000 - self.offset)
                await asyncio.sleep(0.02)
        finally:
            try:
                await self.check()
            finally:
                await lab.close(page)

    async def check(self) -> None:
        assert self.lab is not None
        verification = await self.lab.kernel(self.page, "print(json.dumps(ex.verification))", setup="import json")
        check_verified(json.loads(verification), int(await self.lab.kernel(self.page, "print(len(ex))")))

    async def kernel(self, code: str) -> str:
        assert self.lab is not None and self.page is not None
        return await self.lab.kernel(self.page, code)


class BareWidgetStage(BrowserStage):
    """The browser stage's floor, measured by the same harness in a pass of its own: instead of the explorer, a bare
    widget showing one number, set from a thread of its own that follows the same thread with `store.watch`. Store
    wake-up, comm and page are all paid; no fold, no views, no drawing beyond one text node."""

    name = "bare widget"
    watched = (".ae-probe", "{childList: true, characterData: true, subtree: true}", "Number(el.textContent)")
    ready = ".ae-probe"

    def cells(self, thread_id: str) -> list[str]:
        return [f"probe = bench.probe(store, {thread_id!r})\nprobe"]

    async def check(self) -> None:
        pass  # a bare widget folds nothing, so it has nothing to verify


def probe(store: EventLogStore, thread_id: str) -> Any:
    """The bare widget of `BareWidgetStage`, made in the kernel: one number, following `thread_id` on a thread of
    its own."""
    import anywidget
    import traitlets

    class Probe(anywidget.AnyWidget):
        _esm = """export default { render({ model, el }) {
            const span = document.createElement("span");
            span.className = "ae-probe";
            const draw = () => { span.textContent = String(model.get("n")); };
            model.on("change:n", draw);
            draw();
            el.appendChild(span);
        } };"""
        n = traitlets.Int(0).tag(sync=True)

    widget = Probe()

    async def watch() -> None:
        async for batch in store.watch(thread_id):
            widget.n = batch[-1]["index"] + 1

    threading.Thread(target=lambda: asyncio.run(watch()), name="live-bench-probe", daemon=True).start()
    return widget


async def calibrate(page: Any, rounds: int = 20) -> tuple[float, float, float]:
    """(page clock - CLOCK_MONOTONIC, its uncertainty: half the shortest round trip, page wall clock - ours)."""
    best: tuple[float, float, float] | None = None
    for _ in range(rounds):
        before, wall = clock(), time.time()
        at = await page.evaluate("() => performance.timeOrigin + performance.now()")
        after = clock()
        trip = after - before
        if best is None or trip < best[1] * 2:
            best = (at / 1000 - (before + after) / 2, trip / 2, at / 1000 - wall - trip / 2)
    assert best is not None
    return best


STAGES: dict[str, Callable[[], Observer]] = {"store": StoreStage, "explorer": ExplorerStage, "browser": BrowserStage,
                                             "bare widget": BareWidgetStage}
DEFAULT_STAGES = ["store", "explorer", "browser"]  # "bare widget" runs with "browser", as its floor


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

    async def go(self) -> None:
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

    async def go(self) -> None:
        self._thread.start()

    async def finished(self) -> None:
        while self._thread.is_alive():
            await asyncio.sleep(0.02)


class KernelWriter:
    """The memory store's writer for the browser stage: a thread in the notebook's kernel, where the followed store
    is, running the same `write` (its acks, on the kernel's CLOCK_MONOTONIC, are collected when it is done)."""

    def __init__(self, stage: BrowserStage, thread_id: str, plan: dict[str, Any], run: Run) -> None:
        self.stage, self.thread_id, self.plan, self.run = stage, thread_id, plan, run

    async def go(self) -> None:
        await self.stage.kernel(
            "import asyncio, threading\n_acks = []\n"
            f"_writer = threading.Thread(target=lambda: asyncio.run(bench.write(store, {self.thread_id!r}, {self.plan!r}, "
            "lambda n, t: _acks.append((n, t)))), daemon=True)\n_writer.start()")

    async def finished(self) -> None:
        # Polled, not joined: a kernel busy in `join` would not read the widget's messages (its acknowledgements).
        while (await self.stage.kernel("print(_writer.is_alive())")).strip() == "True":
            await asyncio.sleep(0.25)
        acks = json.loads(await self.stage.kernel("import json\nprint(json.dumps(_acks))"))
        self.run.acks.extend((int(n), float(t), 0.0) for n, t in acks)


Writer = Process | ThreadWriter | KernelWriter


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

    def writer(self, thread_id: str, plan: dict[str, Any], run: Run) -> Writer:
        if self.kind == "memory":
            assert self.memory is not None
            return ThreadWriter(self.memory, thread_id, plan, run)
        return Process(self.kind, self.target, self.schema, thread_id, plan, run)


async def measure(backend: Backend, stage: str, plan: dict[str, Any]) -> Run:
    """Seed a fresh thread, start the stage's observer, let the writer go, wait until the stage saw everything."""
    thread_id = f"live-{uuid.uuid4().hex[:8]}"
    observer = STAGES[stage]()
    await observer.seed(backend, thread_id)
    run = Run()
    points: list[tuple[int, float]] = run.seen.setdefault(stage, [])
    listening = asyncio.Event()

    def seen(length: int, t: float) -> None:
        points.append((length, t))
        listening.set()

    task = asyncio.ensure_future(observer.run(backend, thread_id, seen))
    waiting = asyncio.ensure_future(listening.wait())
    await asyncio.wait({task, waiting}, timeout=180, return_when=asyncio.FIRST_COMPLETED)  # the seed: listening
    if task.done():
        waiting.cancel()
        task.result()  # what stopped the observer
        raise RuntimeError(f"the {stage} observer ended before the writer started")
    if not listening.is_set():
        raise RuntimeError(f"the {stage} observer never saw the seed entry")
    writer = observer.writer(backend, thread_id, plan, run)
    await writer.go()
    await writer.finished()
    final = run.acks[-1][0]
    deadline = clock() + 60
    while (not points or points[-1][0] < final) and clock() < deadline and not task.done():
        await asyncio.sleep(0.01)
    task.cancel()
    try:
        await task  # raises what the observer found wrong (a log that did not verify)
    except asyncio.CancelledError:
        pass
    return run


async def idle_cpu(backend: Backend, seconds: float, stage: str) -> tuple[float, float]:
    """(the stage's CPU s per wall s while nothing is appended, an idle event loop's over the same time)."""
    thread_id = f"idle-{uuid.uuid4().hex[:8]}"
    store = backend.open()
    await store.append(thread_id=thread_id, expected_index=0, entries=[entry(0)])
    if stage == "explorer":
        from agent_explorer import Explorer

        ex = Explorer.from_store(store, thread_id, MACHINE, follow=True)
        stop: Callable[[], Any] = lambda: ex.follow(False)  # noqa: E731
    else:
        watcher = store.watch(thread_id)
        await anext(watcher)
        pending = asyncio.ensure_future(anext(watcher))

        async def stop() -> None:
            pending.cancel()
            await asyncio.gather(pending, return_exceptions=True)
            await watcher.aclose()
    await asyncio.sleep(1.0)  # let a polling backend back off to its idle interval
    cpu, wall = time.process_time(), clock()
    await asyncio.sleep(seconds)
    watching = (time.process_time() - cpu) / (clock() - wall)
    stopped = stop()
    if asyncio.iscoroutine(stopped):
        await stopped
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
    goal = GOALS_P95[kind]
    for name in stages:
        run = await measure(backend, name, {"mode": "latency", "appends": args.appends, "interval": args.interval, "seed": 7})
        values, floor = run.latencies(name), run.pipe_floor()
        if name == "browser":
            bare = await measure(backend, "bare widget", {"mode": "latency", "appends": args.appends,
                                                          "interval": args.interval, "seed": 7})
            floor = bare.latencies("bare widget")
        p95 = pct(values, 0.95)
        verdict = f"< {ms(goal)}: " + ("ok" if p95 < goal and len(values) == len(run.acks) else "MISSED")
        note = ""
        if name == "browser" and BrowserStage.lab is not None:
            lab = BrowserStage.lab
            note = (f"floor: a bare widget on the same watch, own pass; clock +-{ms(lab.clock_error)} "
                    f"(page wall clock {lab.wall_skew * 1000:+.1f} ms from ours)")
        tables["latency"].add(kind, name, f"{len(values)}", ms(pct(values, 0.5)), ms(p95), ms(max(values, default=float("nan"))),
                              f"{ms(pct(floor, 0.5))} / {ms(pct(floor, 0.95))}" if floor else "- (same process)", verdict, note)
    for name in [n for n in stages if n in ("store", "explorer")]:
        watching, baseline = await idle_cpu(backend, args.idle, name)
        tables["idle"].add(kind, name, f"{watching * 100:.3f} %", f"{baseline * 100:.3f} %", f"{(watching - baseline) * 100:+.3f} %")
    for name in stages:
        for mode, plan in (("as fast as the writer can", {"mode": "flood", "batch": 20, "seconds": args.sustain}),
                           ("paced at 2,000/s", {"mode": "paced", "batch": 20, "rate": 2000, "seconds": args.sustain})):
            run = await measure(backend, name, plan)
            values = run.latencies(name)
            first, last = run.acks[0], run.acks[-1]
            rate = (last[0] - first[0]) / max(last[1] - first[1], 1e-9)
            tail = [v for (_, returned, _), v in zip(run.acks, values) if returned > last[1] - 1.0]
            followed = bool(tail) and max(tail) < 1.0 and len(values) == len(run.acks)
            verdict = ""
            if kind == "sqlite" and mode.startswith("paced"):
                verdict = f">= {GOAL_SUSTAINED_SQLITE:,}/s followed: " + ("ok" if followed and rate >= GOAL_SUSTAINED_SQLITE * 0.98 else "MISSED")
            tables["sustained"].add(kind, name, mode, f"{rate:,.0f}", f"{last[0]:,}", ms(pct(values, 0.5)), ms(pct(values, 0.95)),
                                    ms(max(tail) if tail else float("nan")), "yes" if followed else "FELL BEHIND", verdict)


class Lab:
    """A JupyterLab server of our own (127.0.0.1, random token, throwaway root, config and runtime dirs) and headless
    Debian Chromium driven by Playwright's async API; one page per measured pass, its kernel shut down after it."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="agent-explorer-live-lab-"))
        self.token = uuid.uuid4().hex
        self.process: subprocess.Popen[bytes] | None = None
        self.playwright: Any = None
        self.browser: Any = None
        self.clock_error = self.wall_skew = float("nan")

    async def start(self) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        settings = self.root / ".lab-settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
        settings.parent.mkdir(parents=True)
        settings.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
        env = {**os.environ, "JUPYTER_CONFIG_DIR": str(self.root / ".jupyter"), "JUPYTER_RUNTIME_DIR": str(self.root / ".runtime"),
               "JUPYTERLAB_SETTINGS_DIR": str(self.root / ".lab-settings")}
        command = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--port={port}",
                   f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={self.root}", "--LabApp.news_url=",
                   "--LabApp.expose_app_in_browser=True", "--ServerApp.port_retries=0"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            command.append("--allow-root")
        self.log = (self.root / "jupyter.log").open("wb")
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=self.root)
        deadline = clock() + 120
        while not await asyncio.to_thread(self._answers):
            if self.process.poll() is not None or clock() > deadline:
                raise RuntimeError(f"jupyter lab did not start; see {self.root / 'jupyter.log'}")
            await asyncio.sleep(0.3)
        from playwright.async_api import async_playwright

        self.playwright = await async_playwright().start()
        self.browser = await self.playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True,
            args=["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"])

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/api/status?token={self.token}", timeout=2) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    def notebook(self, name: str, cells: list[str]) -> None:
        (self.root / name).write_text(json.dumps({
            "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
            "cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "execution_count": None, "outputs": [],
                       "source": source} for i, source in enumerate(cells)],
        }))

    async def open(self, name: str, selector: str = '.ae-root[data-ready="true"]') -> Any:
        """A new page with notebook `name` open, every cell run, and its widget (`selector`) drawn."""
        context = await self.browser.new_context(viewport={"width": 1400, "height": 1000})
        page = await context.new_page()
        await page.goto(f"{self.url}/lab/tree/{name}?token={self.token}&reset")
        await page.wait_for_function("""() => {
            const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
            const kernel = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
            return kernel && kernel.connectionStatus === "connected" && kernel.status === "idle";
        }""", timeout=120_000)
        await page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        await page.wait_for_function("(selector) => document.querySelector(selector)", arg=selector, timeout=120_000)
        return page

    async def kernel(self, page: Any, code: str, setup: str = "") -> str:
        """Run `code` in the page's kernel, as a cell would; its stdout (an error is raised here)."""
        out = await page.evaluate("""async (code) => {
            const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
            const future = kernel.requestExecute({ code, store_history: false });
            let out = "", error = null;
            future.onIOPub = (msg) => {
                if (msg.header.msg_type === "stream") out += msg.content.text;
                if (msg.header.msg_type === "error") error = `${msg.content.ename}: ${msg.content.evalue}`;
            };
            await future.done;
            return error === null ? {out} : {error};
        }""", f"{setup}\n{code}" if setup else code)
        if "error" in out:
            raise RuntimeError(f"the kernel failed running {code!r}: {out['error']}")
        return str(out["out"])

    async def close(self, page: Any) -> None:
        with contextlib.suppress(Exception):
            await page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
        await page.context.close()

    async def stop(self) -> None:
        if self.browser is not None:
            await self.browser.close()
        if self.playwright is not None:
            await self.playwright.stop()
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.log.close()
        shutil.rmtree(self.root, ignore_errors=True)


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
    parser.add_argument("--stages", default=",".join(DEFAULT_STAGES), help=f"comma-separated, of {', '.join(STAGES)}")
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
    if "browser" in stages:
        if not CHROMIUM.exists():
            print(f"  browser   skipped: {CHROMIUM} is missing (apt-get install chromium)")
            stages.remove("browser")
        else:
            BrowserStage.lab = Lab()
            await BrowserStage.lab.start()
    try:
        await run_stores(kinds, stages, args, tables)
    finally:
        if BrowserStage.lab is not None:
            await BrowserStage.lab.stop()
    print()
    print(tables["latency"].markdown(["store", "stage", "appends", "p50", "p95", "max", "floor p50 / p95", "goal (p95)", "note"]))
    print()
    print(tables["idle"].markdown(["store", "stage", "watcher CPU (of one core)", "idle loop alone", "difference"]))
    print()
    print(tables["sustained"].markdown(["store", "stage", "writer", "entries/s written", "entries", "latency p50", "p95",
                                        "max, last second", "followed", "goal"]))


async def run_stores(kinds: list[str], stages: list[str], args: argparse.Namespace, tables: dict[str, Table]) -> None:
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


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--writer":
        writer_main(sys.argv[2:])
    else:
        asyncio.run(main())
