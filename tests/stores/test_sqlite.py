"""The SQLite store against a real file: conformance, durability settings, locking, and error translation."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from agent_explorer.errors import (
    AgentError,
    AgentEventLogConflictError,
    AgentStoreBusyError,
    AgentStoreError,
)
from agent_explorer.stores.conformance import (
    CONFORMANCE_CASES,
    ConformanceCase,
    run_conformance_case,
)
from agent_explorer.stores.sqlite import SqliteEventLogStore

from .conftest import make_entries, make_entry


@pytest.mark.parametrize("case", CONFORMANCE_CASES, ids=lambda case: case.id)
async def test_sqlite_store_conforms(tmp_path: Path, case: ConformanceCase) -> None:
    # Every check gets a new store object on the same file, as separate hosts would.
    await run_conformance_case(lambda: SqliteEventLogStore(tmp_path / "events.db"), case)


async def test_file_is_wal_with_full_sync_and_the_documented_schema(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    async with SqliteEventLogStore(path) as store:
        await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 2))
        sync_level = await store._run(lambda: store._connection().execute("PRAGMA synchronous").fetchone()[0])
        assert sync_level == 2  # FULL
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        schema = raw.execute("SELECT sql FROM sqlite_master WHERE name = 'agent_event_log'").fetchone()[0]
        assert "PRIMARY KEY (thread_id, idx)" in schema and "UNIQUE (thread_id, id)" in schema
        # The body column holds the exact text append produced: compact JSON, keys in given order.
        body = raw.execute("SELECT body FROM agent_event_log WHERE thread_id = 't' AND idx = 1").fetchone()[0]
    assert body.startswith('{"schemaVersion":1,"id":"e1","index":1,')


async def test_normal_sync_is_an_explicit_opt_in(tmp_path: Path) -> None:
    async with SqliteEventLogStore(tmp_path / "n.db", synchronous="normal") as store:
        await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 1))
        assert await store._run(lambda: store._connection().execute("PRAGMA synchronous").fetchone()[0]) == 1
    with pytest.raises(AgentError, match="synchronous must be one of") as info:
        SqliteEventLogStore(tmp_path / "x.db", synchronous="OFF")
    assert info.value.code == "invalid-argument"


async def test_reopening_the_file_keeps_everything(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    async with SqliteEventLogStore(path) as store:
        await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 3))
    async with SqliteEventLogStore(path) as store:
        assert await store.length("t") == 3
        assert await store.read("t") == make_entries(0, 3)


async def test_a_held_write_lock_is_a_retryable_busy_error_not_a_raw_sqlite_error(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    async with SqliteEventLogStore(path) as store:
        await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 1))
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another process holding the write lock
    try:
        async with SqliteEventLogStore(path, busy_timeout=0.2) as store:
            started = time.monotonic()
            with pytest.raises(AgentStoreBusyError) as info:
                await store.append(thread_id="t", expected_index=1, entries=[make_entry(1)])
            assert time.monotonic() - started >= 0.15
            assert info.value.code == "store-busy" and info.value.retryable
            assert "locked by another writer" in str(info.value)
            # Reads go on while the lock is held: WAL readers never wait for writers.
            assert await store.length("t") == 1
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    async with SqliteEventLogStore(path) as store:
        assert await store.append(thread_id="t", expected_index=1, entries=[make_entry(1)]) == 2


async def test_a_writer_waits_for_the_lock_when_it_is_released_in_time(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    async with SqliteEventLogStore(path) as store:
        await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 1))
        blocker = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        blocker.execute("BEGIN IMMEDIATE")
        blocker.execute("INSERT INTO agent_event_log VALUES ('t', 1, 'other', '{}')")
        timer = threading.Timer(0.2, lambda: (blocker.execute("COMMIT"), blocker.close()))
        timer.start()
        # The waiting writer gets the lock after the commit and sees the true length: a conflict.
        with pytest.raises(AgentEventLogConflictError) as info:
            await store.append(thread_id="t", expected_index=1, entries=[make_entry(1)])
        timer.join()
        assert info.value.actual_length == 2


async def test_the_event_loop_keeps_running_while_sqlite_waits(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    async with SqliteEventLogStore(path) as store:
        await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 1))
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    try:
        async with SqliteEventLogStore(path, busy_timeout=0.3) as store:
            with pytest.raises(AgentStoreBusyError):
                await store.append(thread_id="t", expected_index=1, entries=[make_entry(1)])
    finally:
        task.cancel()
        blocker.execute("ROLLBACK")
        blocker.close()
    assert ticks >= 3  # the loop kept ticking during the 0.3 s wait (a blocked loop ticks at most once)


async def test_unopenable_file_is_a_store_error_naming_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir" / "events.db"
    store = SqliteEventLogStore(missing)
    with pytest.raises(AgentStoreError, match="no-such-dir") as info:
        await store.length("t")
    assert info.value.code == "store-error"
    await store.aclose()


async def test_a_file_that_is_not_a_database_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    async with SqliteEventLogStore(path) as store:
        with pytest.raises(AgentStoreError, match="junk.db"):
            await store.read("t")


async def test_table_name_is_validated_as_an_identifier(tmp_path: Path) -> None:
    for bad in ('x"; DROP TABLE y; --', "1abc", "", "a" * 41, "naïve"):
        with pytest.raises(AgentError, match="not a plain SQL identifier"):
            SqliteEventLogStore(tmp_path / "e.db", table=bad)
    async with SqliteEventLogStore(tmp_path / "e.db", table="custom_log") as store:
        await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 1))
    with sqlite3.connect(tmp_path / "e.db") as raw:
        assert raw.execute("SELECT count(*) FROM custom_log").fetchone()[0] == 1


async def test_closed_store_refuses_work(tmp_path: Path) -> None:
    store = SqliteEventLogStore(tmp_path / "e.db")
    await store.length("t")
    await store.aclose()
    await store.aclose()  # idempotent
    with pytest.raises(AgentStoreError, match="closed"):
        await store.length("t")


def test_sync_facade_reads_a_file(tmp_path: Path) -> None:
    store = SqliteEventLogStore(tmp_path / "e.db")
    store.sync.append(thread_id="t", expected_index=0, entries=make_entries(0, 4))
    assert [e["index"] for e in store.sync.read("t", 1, limit=2)] == [1, 2]
    assert store.sync.list_threads(limit=10) == [("t", 4)]
    store.sync.close()


async def test_the_api_md_call_shape_with_a_directory(tmp_path: Path) -> None:
    # docs/api.md §3 writes `assert_event_log_store_conformance(lambda: SqliteEventLogStore(tmp_path))`:
    # a directory holds the store as events.db.
    from agent_explorer.stores import assert_event_log_store_conformance

    await assert_event_log_store_conformance(lambda: SqliteEventLogStore(tmp_path))
    assert (tmp_path / "events.db").is_file()


async def test_read_only_opens_without_writing_and_refuses_appends(tmp_path: Path) -> None:
    from agent_explorer.stores import open_store

    path = tmp_path / "shared.db"
    async with SqliteEventLogStore(path) as writer:
        await writer.append(thread_id="t", expected_index=0, entries=make_entries(0, 3))
    before = path.read_bytes()
    async with open_store(f"sqlite:///{path}?mode=ro") as reader:
        assert isinstance(reader, SqliteEventLogStore) and reader.read_only
        assert await reader.read("t") == make_entries(0, 3)
        assert await reader.list_threads() == [("t", 3)]
        with pytest.raises(AgentStoreError, match="read-only"):
            await reader.append(thread_id="t", expected_index=3, entries=[make_entry(3)])
        with pytest.raises(AgentStoreError, match="read-only"):
            await reader.fork(thread_id="t", new_thread_id="f", up_to_index=1)
    assert path.read_bytes() == before
    # A file without the table reads as empty, and is left as it was (no DDL).
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    async with SqliteEventLogStore(empty, read_only=True) as reader:
        assert await reader.length("t") == 0 and await reader.read("t") == [] and await reader.list_threads() == []
    with sqlite3.connect(empty) as raw:
        assert raw.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
    # A missing file is an error naming it, not a new empty database.
    with pytest.raises(AgentStoreError, match="missing.db"):
        async with SqliteEventLogStore(tmp_path / "missing.db", read_only=True) as reader:
            await reader.length("t")
    assert not (tmp_path / "missing.db").exists()


async def test_close_while_calls_are_in_flight(tmp_path: Path) -> None:
    # Calls already queued finish; calls after close are refused; no thread or connection leaks.
    before = set(threading.enumerate())
    store = SqliteEventLogStore(tmp_path / "e.db")
    await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 1))
    queued = [asyncio.create_task(store.length("t")) for _ in range(20)]
    await asyncio.sleep(0)
    await store.aclose()
    results = await asyncio.gather(*queued, return_exceptions=True)
    assert all(r == 1 or isinstance(r, AgentStoreError) for r in results), results
    assert not [t for t in set(threading.enumerate()) - before if t.name.startswith("agent-explorer-sqlite")]
