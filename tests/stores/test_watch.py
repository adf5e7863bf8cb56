"""`store.watch` against real writers: other threads and loops, other processes killed with SIGKILL, a
PostgreSQL server restarted under the watcher; and what a closed watcher leaves behind (nothing)."""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_explorer.errors import AgentError
from agent_explorer.stores.base import EventLogStore
from agent_explorer.stores.memory import InMemoryEventLogStore
from agent_explorer.stores.sqlite import SqliteEventLogStore

from . import _workers
from .conftest import drop_schema, make_entries, pg_dsn
from .test_faults import (
    _crash_loop,
    _fast_context,
    _seed,
    _wait_for_line,
    _wait_for_orphaned_backends,
    check_whole_batches,
)

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "pg_cluster.sh"
GUARD = 120.0  # seconds: a hung watcher fails the test instead of hanging the suite (not a speed goal)


class BackgroundWatcher:
    """Follows a thread from a thread of its own with its own event loop, as the explorer will."""

    def __init__(self, open_store: Callable[[], EventLogStore], thread_id: str, from_index: int = 0) -> None:
        self.batches: list[list[dict[str, Any]]] = []
        self.error: BaseException | None = None
        self._grown = threading.Condition()
        self._open_store, self._thread_id, self._from = open_store, thread_id, from_index
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._main, name="test-background-watcher", daemon=True)
        self._thread.start()
        assert self._started.wait(30), "the watcher thread did not start"

    def _main(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            self._task = loop.create_task(self._follow())
            self._started.set()
            loop.run_until_complete(self._task)
        except BaseException as error:  # cancellation ends the run; anything else is the test's to see
            if not isinstance(error, asyncio.CancelledError):
                self.error = error
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
            with self._grown:
                self._grown.notify_all()

    async def _follow(self) -> None:
        store = self._open_store()
        try:
            async for batch in store.watch(self._thread_id, from_index=self._from):
                with self._grown:
                    self.batches.append(batch)
                    self._grown.notify_all()
        finally:
            await store.aclose()

    @property
    def entries(self) -> list[dict[str, Any]]:
        with self._grown:
            return [entry for batch in self.batches for entry in batch]

    def wait_for(self, length: int, timeout: float = GUARD) -> list[dict[str, Any]]:
        """Block until the watcher has yielded entries up to index length - 1 (from the start)."""
        deadline = time.monotonic() + timeout
        with self._grown:
            while sum(len(b) for b in self.batches) + self._from < length:
                assert self.error is None, f"the watcher failed: {self.error!r}"
                assert self._thread.is_alive(), "the watcher stopped"
                left = deadline - time.monotonic()
                assert left > 0, f"the watcher reached {sum(len(b) for b in self.batches) + self._from} of {length} entries"
                self._grown.wait(min(left, 0.5))
        return self.entries

    def stop(self) -> None:
        assert self._loop is not None and self._task is not None
        self._loop.call_soon_threadsafe(self._task.cancel)
        self._thread.join(30)
        assert not self._thread.is_alive(), "the watcher did not stop when cancelled"
        assert self.error is None, f"the watcher failed: {self.error!r}"


def check_batches_are_whole(batches: list[list[dict[str, Any]]]) -> None:
    """Each batch holds whole writer batches (their metadata says which batch and its size)."""
    for batch in batches:
        counts: dict[str, int] = {}
        sizes: dict[str, int] = {}
        for entry in batch:
            meta = entry.get("metadata") or {}
            if "batch" in meta:
                counts[meta["batch"]] = counts.get(meta["batch"], 0) + 1
                sizes[meta["batch"]] = meta["size"]
        torn = {name: (counts[name], sizes[name]) for name in counts if counts[name] != sizes[name]}
        assert not torn, f"a watch batch holds part of an append (batch: (seen, size)): {torn}"


# --- memory: the explorer's case, a watcher on a worker thread's loop ---------------------------------


def test_memory_watch_on_another_thread_wakes_on_appends_from_this_one() -> None:
    store = InMemoryEventLogStore()
    store.sync.append(thread_id="t", expected_index=0, entries=make_entries(0, 1))
    watcher = BackgroundWatcher(lambda: _Unclosable(store), "t")
    try:
        assert watcher.wait_for(1) == make_entries(0, 1)
        length = 1
        appended: list[list[dict[str, Any]]] = []
        for size in (1, 2, 3, 1):
            batch = [dict(e, metadata={"batch": f"b{length}", "size": size}) for e in make_entries(length, size)]
            appended.append(batch)
            length = asyncio.run(store.append(thread_id="t", expected_index=length, entries=batch))  # yet another loop
            watcher.wait_for(length)
        assert watcher.entries == make_entries(0, 1) + [e for b in appended for e in b]
        check_batches_are_whole(watcher.batches)
    finally:
        watcher.stop()
    assert store._watchers == {}, "a stopped watcher is still subscribed"


class _Unclosable(EventLogStore):
    """Lets a background watcher share a memory store without closing it when it stops."""

    def __init__(self, inner: InMemoryEventLogStore) -> None:
        self._inner = inner

    def watch(self, thread_id: str, from_index: int = 0) -> Any:
        return self._inner.watch(thread_id, from_index)

    async def append(self, *, thread_id: str, expected_index: int, entries: Any) -> int:
        return await self._inner.append(thread_id=thread_id, expected_index=expected_index, entries=entries)

    async def read_raw(self, thread_id: str, from_index: int = 0, to_index: int | None = None, *, limit: int | None = None) -> list[str]:
        return await self._inner.read_raw(thread_id, from_index, to_index, limit=limit)

    async def length(self, thread_id: str) -> int:
        return await self._inner.length(thread_id)

    async def fork(self, *, thread_id: str, new_thread_id: str, up_to_index: int) -> int:
        return await self._inner.fork(thread_id=thread_id, new_thread_id=new_thread_id, up_to_index=up_to_index)

    async def list_threads(self, *, limit: int = 100, offset: int = 0) -> Any:
        return await self._inner.list_threads(limit=limit, offset=offset)


# --- what a closed watcher holds: nothing ---------------------------------------------------------------


async def _watch_then(store: EventLogStore, how: str) -> None:
    """Open a watcher, let it wait for an append, then end it by `how`."""
    if how == "aclose":
        watcher = store.watch("t")
        await anext(watcher)
        await watcher.aclose()
    elif how == "cancel":
        async def follow() -> None:
            async for _ in store.watch("t"):
                pass

        task = asyncio.ensure_future(follow())
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    else:
        async for _ in store.watch("t"):
            break
        for _ in range(3):
            await asyncio.sleep(0)  # the loop's async-generator finaliser closes it


@pytest.mark.parametrize("how", ["aclose", "cancel", "break"])
async def test_memory_watchers_unsubscribe_however_they_end(how: str) -> None:
    store = InMemoryEventLogStore()
    await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 1))
    for _ in range(5):
        await _watch_then(store, how)
    assert store._watchers == {}


def _watch_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("agent-explorer-sqlite-watch")]


@pytest.mark.parametrize("how", ["aclose", "cancel", "break"])
async def test_sqlite_watchers_close_their_connection_and_thread_however_they_end(tmp_path: Path, how: str) -> None:
    async with SqliteEventLogStore(tmp_path / "w.db") as store:
        await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 1))
        for _ in range(5):
            await _watch_then(store, how)
        deadline = time.monotonic() + 10
        while _watch_threads() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert _watch_threads() == [], "a closed watcher left its polling thread running"
        # Nothing holds the WAL: a TRUNCATE checkpoint completes (a reader mid-transaction would block it).
        conn = sqlite3.connect(store.path)
        try:
            busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            conn.close()
        assert busy == 0


async def test_sqlite_watcher_holds_no_read_transaction_while_waiting(tmp_path: Path) -> None:
    # The store uses WAL (readers never block writers), and a waiting watcher is not even a reader:
    # a TRUNCATE checkpoint, which waits for every reader, completes while it waits.
    async with SqliteEventLogStore(tmp_path / "w.db") as store:
        await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 1))
        watcher = store.watch("t")
        assert len(await anext(watcher)) == 1
        pending = asyncio.ensure_future(anext(watcher))
        await asyncio.sleep(0.3)  # the watcher polls a few times meanwhile
        conn = sqlite3.connect(store.path, timeout=0, isolation_level=None)
        try:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            conn.execute("INSERT INTO agent_event_log VALUES ('other', 0, 'x', '{}')")
            busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            conn.close()
        assert busy == 0, "a waiting watcher kept a read transaction open"
        await store.append(thread_id="t", expected_index=1, entries=make_entries(1, 1))
        assert [e["index"] for e in await pending] == [1]
        await watcher.aclose()


def test_sqlite_watch_poll_interval_is_checked(tmp_path: Path) -> None:
    for bad in ((0, 1), (0.2, 0.1), (0.1,), "fast", (True, 1)):
        with pytest.raises(AgentError, match="watch_poll") as info:
            SqliteEventLogStore(tmp_path / "x.db", watch_poll=bad)  # type: ignore[arg-type]
        assert info.value.code == "invalid-argument"


async def test_sqlite_watch_of_a_read_only_store_never_writes(tmp_path: Path) -> None:
    path = tmp_path / "ro.db"
    async with SqliteEventLogStore(path) as writer:
        await writer.append(thread_id="t", expected_index=0, entries=make_entries(0, 2))
        async with SqliteEventLogStore(path, read_only=True) as reader:
            watcher = reader.watch("t")
            assert len(await anext(watcher)) == 2
            pending = asyncio.ensure_future(anext(watcher))
            await writer.append(thread_id="t", expected_index=2, entries=make_entries(2, 1))
            assert [e["index"] for e in await pending] == [2]
            await watcher.aclose()


# --- PostgreSQL: NOTIFY on commit only, one listener connection per watcher, released on close ------------


async def _watch_connections(dsn: str) -> int:
    import psycopg

    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cur = await conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'agent_explorer:watch'")
        return int((await cur.fetchone())[0])  # type: ignore[index]


@pytest.mark.postgres
@pytest.mark.parametrize("how", ["aclose", "cancel", "break"])
async def test_postgres_watchers_close_their_listener_however_they_end(pg_schema: str, how: str) -> None:
    from agent_explorer.stores.postgres import PostgresEventLogStore

    dsn = pg_dsn()
    assert dsn is not None
    try:
        async with PostgresEventLogStore(dsn, schema=pg_schema) as store:
            await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 1))
            watcher = store.watch("t")
            await anext(watcher)
            assert await _watch_connections(dsn) >= 1, "a watcher listens on a connection of its own"
            await watcher.aclose()
            for _ in range(5):
                await _watch_then(store, how)
            deadline = time.monotonic() + 10
            while await _watch_connections(dsn) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert await _watch_connections(dsn) == 0, "a closed watcher left its LISTEN connection open"
    finally:
        await drop_schema(dsn, pg_schema)


@pytest.mark.postgres
async def test_postgres_append_notifies_its_thread_only_when_it_commits(pg_schema: str) -> None:
    import psycopg
    from psycopg import sql

    from agent_explorer.errors import AgentEventLogConflictError
    from agent_explorer.stores.pg_listen import channel_for
    from agent_explorer.stores.postgres import PostgresEventLogStore

    dsn = pg_dsn()
    assert dsn is not None
    long_id = "'; NOTIFY x; --\"" + "é" * 500
    try:
        async with PostgresEventLogStore(dsn, schema=pg_schema) as store, await psycopg.AsyncConnection.connect(dsn, autocommit=True) as listener:
            channel = channel_for(store.qualified_table, long_id)
            assert len(channel.encode()) <= 63 and channel.isidentifier()
            assert channel != channel_for(store.qualified_table, long_id + "x") != channel_for("other.table", long_id)
            await listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
            await store.append(thread_id=long_id, expected_index=0, entries=make_entries(0, 3))
            with pytest.raises(AgentEventLogConflictError):  # refused: nothing committed, nothing notified
                await store.append(thread_id=long_id, expected_index=1, entries=make_entries(1, 1, tag="x"))
            await store.append(thread_id=long_id + "-sibling", expected_index=0, entries=make_entries(0, 1))
            await store.append(thread_id=long_id, expected_index=3, entries=make_entries(3, 1))
            await store.fork(thread_id=long_id, new_thread_id="fork", up_to_index=2)
            got = [(n.channel, n.payload) async for n in listener.notifies(timeout=2.0, stop_after=3)]
            assert got == [(channel, "3"), (channel, "4")], got  # the payload is the new length
            # A watcher on that thread id follows it through the hashed channel.
            watcher = store.watch(long_id, from_index=4)
            pending = asyncio.ensure_future(anext(watcher))
            await asyncio.sleep(0.05)
            await store.append(thread_id=long_id, expected_index=4, entries=make_entries(4, 2))
            assert [e["index"] for e in await pending] == [4, 5]
            await watcher.aclose()
    finally:
        await drop_schema(dsn, pg_schema)


# --- writers killed with SIGKILL while a watcher follows --------------------------------------------------


def _follow_through_crashes(kind: str, target: str, schema: str, open_store: Callable[[], EventLogStore], tmp_path: Path) -> None:
    watcher = BackgroundWatcher(open_store, "t")
    try:
        watcher.wait_for(1)
        kills, acked = _crash_loop(kind, target, schema, tmp_path, kills_wanted=20, budget_s=90)
        assert kills >= 20
        if kind == "postgres":
            asyncio.run(_wait_for_orphaned_backends(target))

        async def stored() -> list[dict[str, Any]]:
            async with open_store() as store:
                return await store.read("t")

        committed = asyncio.run(stored())
        assert len(committed) >= acked
        # A new writer resumes the thread after the last kill; the watcher follows it too.
        resume = [dict(e, metadata={"batch": "resume", "size": 3}) for e in make_entries(len(committed), 3, tag="resume-")]

        async def resume_thread() -> None:
            async with open_store() as store:
                await store.append(thread_id="t", expected_index=len(committed), entries=resume)

        asyncio.run(resume_thread())
        seen = watcher.wait_for(len(committed) + 3)
        # Exactly the committed prefix (not a partial batch of a killed writer), then the resumed run.
        assert seen == committed + resume
        check_whole_batches(seen)
        check_batches_are_whole(watcher.batches)
        assert len(watcher.batches) > kills // 2, "the watcher should have followed live, batch by batch"
    finally:
        watcher.stop()


@pytest.mark.slow
def test_sqlite_watch_follows_writers_killed_mid_run(tmp_path: Path) -> None:
    path = str(tmp_path / "crash.db")
    asyncio.run(_seed(SqliteEventLogStore(path)))
    _follow_through_crashes("sqlite", path, "", lambda: SqliteEventLogStore(path), tmp_path)


@pytest.mark.slow
@pytest.mark.postgres
def test_postgres_watch_follows_writers_killed_mid_run(pg_schema: str, tmp_path: Path) -> None:
    from agent_explorer.stores.postgres import PostgresEventLogStore

    dsn = pg_dsn()
    assert dsn is not None
    asyncio.run(_seed(PostgresEventLogStore(dsn, schema=pg_schema)))
    try:
        _follow_through_crashes("postgres", dsn, pg_schema, lambda: PostgresEventLogStore(dsn, schema=pg_schema), tmp_path)
    finally:
        asyncio.run(drop_schema(dsn, pg_schema))


# --- a PostgreSQL server restarted under the watcher -------------------------------------------------------


@pytest.fixture
def own_cluster() -> Any:
    """A throwaway cluster of this test's own, so restarting it never disturbs the suite's server."""
    has_binaries = shutil.which("initdb") or list(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not has_binaries:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("CI=true but the PostgreSQL binaries (initdb, pg_ctl) are missing")
        pytest.skip("PostgreSQL binaries (initdb, pg_ctl) are not installed")
    directory = tempfile.mkdtemp(prefix="pg-watch-restart-")
    started = subprocess.run(["bash", str(SCRIPT), "start", directory], capture_output=True, text=True, timeout=120)
    assert started.returncode == 0, started.stderr
    try:
        yield directory, started.stdout.strip()
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", directory], capture_output=True, text=True, timeout=120)
        shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.postgres
def test_postgres_watch_resumes_after_a_server_restart_without_loss_or_duplicates(own_cluster: Any, tmp_path: Path) -> None:
    from agent_explorer.stores.postgres import PostgresEventLogStore

    directory, dsn = own_cluster
    schema = f"t_{uuid.uuid4().hex[:12]}"

    def open_store() -> EventLogStore:
        return PostgresEventLogStore(dsn, schema=schema, timeout=5)

    asyncio.run(_seed(open_store()))
    watcher = BackgroundWatcher(open_store, "t")
    total = 400
    ack_path = tmp_path / "acks.txt"
    writer = _fast_context().Process(target=_workers.steady_writer, args=("postgres", dsn, schema, "t", "steady", str(ack_path), total, 0.01))
    writer.start()
    try:
        _wait_for_line(ack_path, writer, timeout=60, count=6)  # READY and a few appends acknowledged
        before = len(watcher.entries)
        for restart in range(2):
            done = subprocess.run(["bash", str(SCRIPT), "restart", directory], capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stderr
            _wait_for_line(ack_path, writer, timeout=60, count=ack_path.read_text().count("\n") + 5)
        writer.join(GUARD)
        assert writer.exitcode == 0, f"the writer failed: {ack_path.read_text()[-500:]}"
        lines = ack_path.read_text().splitlines()
        assert lines[-1].startswith(f"DONE {total} "), lines[-3:]
        assert any(line.startswith("RETRY") for line in lines), "the writer never noticed the restarts"
        seen = watcher.wait_for(total)

        async def stored() -> list[dict[str, Any]]:
            async with open_store() as store:
                return await store.read("t")

        assert seen == asyncio.run(stored()), "the watcher lost or repeated entries across the restarts"
        assert len(seen) == total and before < total
        check_whole_batches(seen)
        check_batches_are_whole(watcher.batches)
        # It listens again (not merely polling): a listener connection is back after the restarts.
        assert asyncio.run(_watch_connections(dsn)) == 1
    finally:
        if writer.is_alive():
            writer.kill()
        watcher.stop()


# -- watch_threads: one watcher for a whole store (the run list's follow) ---------------------------------------


async def _next(watcher: Any) -> list[tuple[str, int]]:
    batch = await asyncio.wait_for(anext(watcher), timeout=30)  # a guard, not a speed goal
    return sorted((info.thread_id, info.length) for info in batch)


async def _threads_appear_and_grow(store: EventLogStore, known: dict[str, int] | None = None) -> None:
    from agent_explorer.stores.watching import watch_threads

    await store.append(thread_id="a", expected_index=0, entries=make_entries(0, 2))
    await store.append(thread_id="b", expected_index=0, entries=make_entries(0, 1))
    watcher = watch_threads(store, {"a": 2, **(known or {})})
    try:
        # What the caller does not know yet comes first; a thread it knows at its length does not.
        assert await _next(watcher) == [("b", 1)]
        await store.append(thread_id="c", expected_index=0, entries=make_entries(0, 3))
        assert await _next(watcher) == [("c", 3)]
        await store.append(thread_id="a", expected_index=2, entries=make_entries(2, 1))
        await store.fork(thread_id="c", new_thread_id="d", up_to_index=2)
        got: list[tuple[str, int]] = []
        while len(got) < 2:  # the grown thread and the fork, in one batch or two
            got = sorted({*got, *await _next(watcher)})
        assert got == [("a", 3), ("d", 2)]
    finally:
        await watcher.aclose()


async def test_watch_threads_reports_new_and_grown_threads_in_memory() -> None:
    await _threads_appear_and_grow(InMemoryEventLogStore())


async def test_watch_threads_reports_new_and_grown_threads_on_sqlite(tmp_path: Path) -> None:
    store = SqliteEventLogStore(tmp_path / "w.db")
    try:
        await _threads_appear_and_grow(store)
    finally:
        await store.aclose()


@pytest.mark.postgres
async def test_watch_threads_on_postgres_wakes_on_the_store_channel(pg_schema: str) -> None:
    import psycopg
    from psycopg import sql

    from agent_explorer.stores.pg_listen import store_channel_for
    from agent_explorer.stores.postgres import PostgresEventLogStore

    dsn = pg_dsn()
    assert dsn is not None
    try:
        async with PostgresEventLogStore(dsn, schema=pg_schema) as store, \
                await psycopg.AsyncConnection.connect(dsn, autocommit=True) as listener:
            # Every append and fork notifies the store's channel with the thread id, once committed.
            await listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(store_channel_for(store.qualified_table))))
            await store.append(thread_id="x", expected_index=0, entries=make_entries(0, 2))
            await store.fork(thread_id="x", new_thread_id="y", up_to_index=1)
            got = [n.payload async for n in listener.notifies(timeout=2.0, stop_after=2)]
            assert got == ["x", "y"]
            await _threads_appear_and_grow(store, {"x": 2, "y": 1})
    finally:
        await drop_schema(dsn, pg_schema)


@pytest.mark.postgres
async def test_the_store_wakeup_names_the_threads_its_notices_carry(pg_schema: str) -> None:
    from agent_explorer.stores.postgres import PostgresEventLogStore

    dsn = pg_dsn()
    assert dsn is not None
    try:
        async with PostgresEventLogStore(dsn, schema=pg_schema) as store:
            wakeup = store._store_wakeup()
            try:
                await wakeup.open()
                assert wakeup.changed() is None  # just connected: what came before is unknown, list the store
                await store.append(thread_id="x", expected_index=0, entries=make_entries(0, 1))
                await store.append(thread_id="y", expected_index=0, entries=make_entries(0, 1))
                await asyncio.wait_for(wakeup.wait(), 30)
                got: set[str] = set()
                while got != {"x", "y"}:  # one wake-up or two, the payloads name both threads
                    names = wakeup.changed()
                    assert names is not None
                    got |= names
                    if got != {"x", "y"}:
                        await asyncio.wait_for(wakeup.wait(), 30)
                assert wakeup.changed() == set()  # nothing since
            finally:
                await wakeup.close()
    finally:
        await drop_schema(dsn, pg_schema)
