"""The issue's fault list, each a test: races across processes and connections, crashes, hostile input."""

from __future__ import annotations

import asyncio
import collections
import multiprocessing
import random
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_explorer.errors import (
    AgentError,
    AgentEventLogConflictError,
    AgentLogFormatError,
    NonSerializableAgentEventError,
)
from agent_explorer.stores.base import EventLogStore
from agent_explorer.stores.memory import InMemoryEventLogStore
from agent_explorer.stores.sqlite import SqliteEventLogStore

from . import _workers
from .conftest import drop_schema, make_entries, make_entry, pg_dsn


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def store(request: pytest.FixtureRequest, tmp_path: Path, pg_schema: str) -> AsyncIterator[EventLogStore]:
    if request.param == "memory":
        yield InMemoryEventLogStore()
    elif request.param == "sqlite":
        async with SqliteEventLogStore(tmp_path / "events.db") as sqlite_store:
            yield sqlite_store
    else:
        from agent_explorer.stores.postgres import PostgresEventLogStore

        dsn = pg_dsn()
        async with PostgresEventLogStore(dsn, schema=pg_schema) as pg:
            yield pg
        await drop_schema(dsn, pg_schema)


def check_whole_batches(entries: list[dict[str, Any]]) -> collections.Counter[str]:
    """The thread is contiguous, ids are unique, and every batch is there whole or not at all."""
    assert [e["index"] for e in entries] == list(range(len(entries)))
    assert len({e["id"] for e in entries}) == len(entries)
    batches: collections.Counter[str] = collections.Counter()
    sizes: dict[str, int] = {}
    previous = None
    for entry in entries:
        meta = entry.get("metadata") or {}
        if "batch" not in meta:
            continue
        batch = meta["batch"]
        assert batch == previous or batches[batch] == 0, f"batch {batch} is split"
        batches[batch] += 1
        sizes[batch] = meta["size"]
        previous = batch
    assert all(batches[b] == sizes[b] for b in batches), "a batch was stored in part"
    return batches


# --- same-position races ---------------------------------------------------------------------------


@pytest.mark.parametrize("writers", [2, 8])
def test_sqlite_same_position_race_between_processes(tmp_path: Path, writers: int) -> None:
    rounds = 200
    path = str(tmp_path / "race.db")
    asyncio.run(_seed(SqliteEventLogStore(path)))
    ctx = _fast_context()
    barrier, results = ctx.Barrier(writers), ctx.Queue()
    procs = [ctx.Process(target=_workers.sqlite_race_writer, args=(path, "t", w, rounds, barrier, results)) for w in range(writers)]
    for proc in procs:
        proc.start()
    outcomes = dict(results.get(timeout=240) for _ in procs)
    for proc in procs:
        proc.join(30)
    asyncio.run(_check_race(SqliteEventLogStore(path), outcomes, writers, rounds))


@pytest.mark.postgres
@pytest.mark.parametrize("writers", [2, 8])
async def test_postgres_same_position_race_between_connections(pg_schema: str, writers: int) -> None:
    from agent_explorer.stores.postgres import PostgresEventLogStore

    dsn = pg_dsn()
    rounds = 200
    # One store (one pool, one connection) per writer: the server, not this process, decides.
    stores = [PostgresEventLogStore(dsn, schema=pg_schema, min_size=1, max_size=1) for _ in range(writers)]
    try:
        await _seed(stores[0], close=False)
        outcomes: dict[int, list[tuple[Any, ...]]] = {w: [] for w in range(writers)}
        for round_no in range(rounds):
            expected = await stores[0].length("t")

            async def attempt(w: int, round_no: int = round_no, expected: int = expected) -> None:
                try:
                    length = await stores[w].append(thread_id="t", expected_index=expected, entries=_workers.batch_for(round_no, w, expected))
                    outcomes[w].append(("win", round_no, expected, length))
                except AgentEventLogConflictError as error:
                    outcomes[w].append(("conflict", round_no, expected, error.thread_id, error.expected_index, error.actual_length))
                except Exception as error:
                    outcomes[w].append(("error", round_no, expected, f"{type(error).__name__}: {error}"))

            await asyncio.gather(*(attempt(w) for w in range(writers)))
        await _check_race(stores[0], outcomes, writers, rounds, close=False)
    finally:
        for s in stores:
            await s.aclose()
        await drop_schema(dsn, pg_schema)


async def _seed(store: EventLogStore, close: bool = True) -> None:
    await store.append(thread_id="t", expected_index=0, entries=[make_entry(0)])
    if close:
        await store.aclose()


async def _check_race(store: EventLogStore, outcomes: dict[int, list[tuple[Any, ...]]], writers: int, rounds: int, close: bool = True) -> None:
    try:
        by_round: dict[int, list[tuple[int, tuple[Any, ...]]]] = collections.defaultdict(list)
        for w, results in outcomes.items():
            assert len(results) == rounds, f"writer {w} stopped early: {results[-1:]}"
            for outcome in results:
                by_round[outcome[1]].append((w, outcome))
        acknowledged: list[tuple[int, int, int]] = []
        for round_no in range(rounds):
            results = by_round[round_no]
            errors = [o for _, o in results if o[0] not in ("win", "conflict")]
            assert not errors, f"round {round_no}: not a conflict: {errors}"  # never "database is locked"
            wins = [(w, o) for w, o in results if o[0] == "win"]
            assert len(wins) == 1, f"round {round_no}: {len(wins)} winners"
            (winner, (_, _, expected, length)) = wins[0]
            for w, o in results:
                if o[0] == "conflict":
                    assert o[3:] == ("t", expected, length), f"round {round_no}, writer {w}: conflict fields {o[3:]}"
            acknowledged.append((winner, expected, length))
        entries = await store.read("t")
        batches = check_whole_batches(entries)
        assert len(batches) == rounds
        for round_no, (winner, expected, length) in enumerate(acknowledged):  # no acknowledged write missing
            assert [e["id"] for e in entries[expected:length]] == [f"r{round_no}-w{winner}-{k}" for k in range(length - expected)]
        assert len(entries) == acknowledged[-1][2]
    finally:
        if close:
            await store.aclose()


# --- crashes -------------------------------------------------------------------------------------------


def _fast_context() -> Any:
    """Children forked from a preloaded single-threaded server: ~ms per start instead of a Python boot."""
    ctx = multiprocessing.get_context("forkserver")
    # The server cannot import this test package (it ignores sys.path in 3.11), so preload what the
    # workers import; children then only unpickle their target.
    ctx.set_forkserver_preload(["__main__", "agent_explorer", "agent_explorer.eventlog.entries", "agent_explorer.stores.sqlite", "agent_explorer.stores.postgres"])
    return ctx


def _crash_loop(kind: str, target: str, schema: str, directory: Path, kills_wanted: int, budget_s: float) -> tuple[int, int]:
    """Start a writer, let it append for a random moment, SIGKILL it; repeat. Returns (kills, acked)."""
    ctx = _fast_context()
    rng = random.Random(20261130)
    kills = 0
    acked = 0
    mid_stream = 0
    deadline = time.monotonic() + budget_s
    while kills < kills_wanted and time.monotonic() < deadline:
        ack_path = directory / f"acks-{kills}.txt"
        proc = ctx.Process(target=_workers.crash_writer, args=(kind, target, schema, "t", f"s{kills}", str(ack_path)))
        proc.start()
        ready = _wait_for_line(ack_path, proc, timeout=60)
        start_length = int(ready.split()[1])
        assert start_length >= acked, f"acknowledged {acked} entries but a new writer found {start_length}"
        if kills % 2:
            # Every other writer first gets 1-3 appends acknowledged, so at least half the kills
            # land mid-stream however slow the machine is; the others die at any moment at all.
            _wait_for_line(ack_path, proc, timeout=60, count=1 + rng.randrange(1, 4))
            time.sleep(rng.uniform(0.0, 0.01))
        else:
            time.sleep(rng.uniform(0.0, 0.05))
        proc.kill()  # SIGKILL: no cleanup, no rollback by the client, mid-write or not
        proc.join(30)
        assert proc.exitcode == -signal.SIGKILL, f"writer exited with {proc.exitcode} before the kill"
        lines = ack_path.read_text().split("\n")[:-1]  # a cut-off last line is not an acknowledgement
        acks = [int(line.split()[1]) for line in lines if line.startswith("ACK ")]
        if acks:
            acked = max(acked, acks[-1])
            mid_stream += 1
        kills += 1
    # Most kills must land while the writer is appending, or the test proves little.
    assert mid_stream >= kills // 2, f"only {mid_stream} of {kills} kills came after the writer's first append"
    return kills, acked


def _wait_for_line(path: Path, proc: Any, timeout: float, count: int = 1) -> str:
    """Wait until the writer has written `count` whole lines; return the first (READY n)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            text = path.read_text()
            if text.count("\n") >= count:
                return text.split("\n", 1)[0]
        assert proc.is_alive(), f"writer exited ({proc.exitcode}) after {path.read_text() if path.exists() else 'nothing'!r}"
        time.sleep(0.002)
    raise AssertionError(f"writer did not write {count} lines in time")


def test_sqlite_survives_sigkill_at_random_moments(tmp_path: Path) -> None:
    path = str(tmp_path / "crash.db")
    asyncio.run(_seed(SqliteEventLogStore(path)))
    kills, acked = _crash_loop("sqlite", path, "", tmp_path, kills_wanted=100, budget_s=120)
    assert kills >= 100, f"only {kills} kills within the time budget"
    asyncio.run(_check_after_crashes(SqliteEventLogStore(path), acked))


@pytest.mark.postgres
def test_postgres_survives_sigkill_at_random_moments(pg_schema: str, tmp_path: Path) -> None:
    from agent_explorer.stores.postgres import PostgresEventLogStore

    dsn = pg_dsn()
    asyncio.run(_seed(PostgresEventLogStore(dsn, schema=pg_schema)))
    try:
        kills, acked = _crash_loop("postgres", dsn, pg_schema, tmp_path, kills_wanted=100, budget_s=120)
        assert kills >= 100, f"only {kills} kills within the time budget"
        asyncio.run(_wait_for_orphaned_backends(dsn))
        asyncio.run(_check_after_crashes(PostgresEventLogStore(dsn, schema=pg_schema), acked))
    finally:
        asyncio.run(drop_schema(dsn, pg_schema))


async def _wait_for_orphaned_backends(dsn: str) -> None:
    """A killed client's last statement still runs to its end on the server; let those finish first."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        for _ in range(500):
            cur = await conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid()"
                " AND application_name = 'agent_explorer' AND state <> 'idle'"
            )
            if (await cur.fetchone())[0] == 0:  # type: ignore[index]
                return
            await asyncio.sleep(0.02)
    raise AssertionError("orphaned server backends of killed writers did not finish within 10 s")


async def _check_after_crashes(store: EventLogStore, acked: int) -> None:
    async with store:
        entries = await store.read("t")
        check_whole_batches(entries)  # a contiguous prefix of whole batches
        assert len(entries) >= acked, f"{acked} entries were acknowledged but only {len(entries)} survived"
        # Appending continues from the length.
        n = len(entries)
        assert await store.append(thread_id="t", expected_index=n, entries=[make_entry(n, id="after-crash")]) == n + 1


# --- rejected input writes nothing --------------------------------------------------------------------


@pytest.mark.parametrize("where", [0, 2, 4])
async def test_a_bad_entry_anywhere_in_a_batch_stores_nothing(store: EventLogStore, where: int) -> None:
    await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 2))
    problems: list[tuple[Any, type[Exception]]] = [
        ({"value": float("nan")}, NonSerializableAgentEventError),
        ({"value": float("-inf")}, NonSerializableAgentEventError),
        ({"value": "\udfff"}, NonSerializableAgentEventError),
        ({"value": object()}, NonSerializableAgentEventError),
        ({"id": "e0"}, AgentError),  # an id already in the thread
        ({"index": 99}, AgentLogFormatError),
        ({"schemaVersion": 2}, AgentLogFormatError),
    ]
    for change, kind in problems:
        batch = make_entries(2, 5)
        if "value" in change:
            batch[where]["event"]["value"] = change["value"]
        else:
            batch[where].update(change)
        with pytest.raises(kind):
            await store.append(thread_id="t", expected_index=2, entries=batch)
        assert await store.length("t") == 2
    assert await store.read("t") == make_entries(0, 2)


async def test_limits_on_ids_and_sizes_are_clear_errors(store: EventLogStore) -> None:
    # Thread and entry ids up to 1024 UTF-8 bytes are stored verbatim; longer ones are refused.
    long_ok = "é" * 512
    await store.append(thread_id=long_ok, expected_index=0, entries=[make_entry(0, id="x" * 1024)])
    assert (await store.list_threads(limit=1000))[0].thread_id == long_ok
    with pytest.raises(AgentError, match="1026 UTF-8 bytes long; the limit is 1024") as info:
        await store.append(thread_id="é" * 513, expected_index=0, entries=make_entries(0, 1))
    assert info.value.code == "invalid-argument"
    with pytest.raises(AgentError, match="entry id at index 0 is 1025 UTF-8 bytes"):
        await store.append(thread_id="t", expected_index=0, entries=[make_entry(0, id="x" * 1025)])


async def test_a_16_mib_entry_round_trips(store: EventLogStore) -> None:
    blob = ("0123456789abcdef" * 64 + "ü\U0001F600") * (16 * 1024 * 1024 // 1030 + 8)
    entries = [make_entry(0), make_entry(1, event={"type": "BIG", "blob": blob})]
    await store.append(thread_id="big", expected_index=0, entries=entries)
    raw = await store.read_raw("big", 1)
    assert len(raw[0].encode("utf-8")) > 16 * 1024 * 1024
    assert (await store.read("big", 1))[0]["event"]["blob"] == blob


async def test_expected_index_at_the_top_of_the_range(store: EventLogStore) -> None:
    # 2**63 - 1 is a valid bigint but passes every real length: a conflict, not an overflow.
    with pytest.raises(AgentEventLogConflictError) as info:
        await store.append(thread_id="t", expected_index=2**63 - 1, entries=[])
    assert info.value.actual_length == 0
    with pytest.raises(AgentError, match="would pass index"):
        await store.append(thread_id="t", expected_index=2**63 - 1, entries=[make_entry(0)])


# --- fork under concurrent appends ---------------------------------------------------------------


async def test_fork_while_another_writer_appends_is_a_consistent_prefix(request: pytest.FixtureRequest, store: EventLogStore, tmp_path: Path, pg_schema: str) -> None:
    # A second store object (its own connection / worker thread) forks while the first appends.
    if isinstance(store, SqliteEventLogStore):
        forker: EventLogStore = SqliteEventLogStore(store.path)
    elif isinstance(store, InMemoryEventLogStore):
        forker = store
    else:
        from agent_explorer.stores.postgres import PostgresEventLogStore

        forker = PostgresEventLogStore(pg_dsn(), schema=pg_schema)
    await store.append(thread_id="src", expected_index=0, entries=make_entries(0, 1))
    done = asyncio.Event()

    made: list[tuple[str, int]] = []

    async def writer() -> None:
        # Keep appending until both sides have had plenty of turns, however fast the disk is.
        length, b = 1, 0
        while b < 60 or len(made) < 10:
            batch = [dict(e, metadata={"batch": f"b{b}", "size": 5}) for e in make_entries(length, 5)]
            length = await store.append(thread_id="src", expected_index=length, entries=batch)
            b += 1
            await asyncio.sleep(0)
        done.set()

    async def forks() -> list[tuple[str, int]]:
        while not done.is_set():
            up = await forker.length("src")
            name = f"fork-{len(made)}"
            await forker.fork(thread_id="src", new_thread_id=name, up_to_index=up)
            made.append((name, up))
            await asyncio.sleep(0)
        return made

    await asyncio.gather(writer(), forks())
    source = await store.read_raw("src")
    assert len(made) >= 10
    for name, up in made:
        assert await store.read_raw(name) == source[:up], f"{name} is not the prefix [0, {up})"
        check_whole_batches(await store.read(name))
    with pytest.raises(AgentError, match="cannot fork"):
        await store.fork(thread_id="src", new_thread_id="too-far", up_to_index=len(source) + 1)
    if forker is not store:
        await forker.aclose()


async def test_nesting_beyond_the_limit_is_refused_clearly(store: EventLogStore) -> None:
    from agent_explorer.stores.base import MAX_NESTING

    def nested(depth: int) -> dict[str, Any]:
        event: dict[str, Any] = {"type": "DEEP"}
        cursor = event
        for _ in range(depth - 1):
            cursor["n"] = {}
            cursor = cursor["n"]
        return event

    # The deepest allowed entry round-trips (the event is level 1, the entry itself level 0).
    await store.append(thread_id="t", expected_index=0, entries=[make_entry(0, event=nested(MAX_NESTING - 1))])
    assert await store.read("t") == [make_entry(0, event=nested(MAX_NESTING - 1))]
    with pytest.raises(NonSerializableAgentEventError, match="nest at most 254 levels"):
        await store.append(thread_id="t", expected_index=1, entries=[make_entry(1, event=nested(MAX_NESTING + 5))])
    head = '{"schemaVersion":1,"id":"r","index":1,"recordedAt":"2026-11-30T04:00:00.000Z","machineId":"m","machineVersion":"1","event":{"type":"X","d":'
    # As JSON text: the same limit (so the entry can be re-encoded and hashed later), and text
    # deeper than the parser's own limit is a format error, never a RecursionError.
    with pytest.raises(NonSerializableAgentEventError, match="nest at most 254 levels"):
        await store.append(thread_id="t", expected_index=1, entries=[head + "[" * 300 + "]" * 300 + "}}"])
    with pytest.raises(AgentLogFormatError, match="not strict JSON"):
        await store.append(thread_id="t", expected_index=1, entries=[head + "[" * 5000 + "]" * 5000 + "}}"])
    assert await store.length("t") == 1


@pytest.mark.parametrize(
    ("limit", "value", "entries", "message"),
    [
        ("MAX_BATCH_ENTRIES", 3, 4, "a batch holds at most 3 entries, got 4"),
        ("MAX_BATCH_BYTES", 1500, 6, "the batch passes 1500 bytes of JSON at index"),
        ("MAX_ENTRY_BYTES", 200, 1, "entry at index 0 is .* bytes of JSON; the limit is 200"),
    ],
)
async def test_batch_and_entry_size_limits_refuse_before_writing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, limit: str, value: int, entries: int, message: str) -> None:
    # The documented limits are enforced in one place for every store; shrunk here to test cheaply.
    from agent_explorer.stores import base

    monkeypatch.setattr(base, limit, value)
    async with SqliteEventLogStore(tmp_path / "limits.db") as sqlite_store:
        for target in (InMemoryEventLogStore(), sqlite_store):
            with pytest.raises(AgentError, match=message) as info:
                await target.append(thread_id="t", expected_index=0, entries=make_entries(0, entries))
            assert info.value.code == "invalid-argument"
            assert await target.length("t") == 0
