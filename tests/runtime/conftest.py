"""Fixtures of the runtime tests: real stores (in-memory reference, SQLite file), a failing store,
deterministic clocks and id generators."""

from __future__ import annotations

import asyncio
import itertools
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pg_server import pg_dsn

from agent_explorer.errors import AgentStoreError
from agent_explorer.stores import (
    InMemoryEventLogStore,
    create_in_memory_event_log_store,
)


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Any) -> AsyncIterator[Any]:
    if request.param == "memory":
        yield create_in_memory_event_log_store()
        return
    from agent_explorer.stores import SqliteEventLogStore

    sqlite = SqliteEventLogStore(str(tmp_path / "runs.db"))
    try:
        yield sqlite
    finally:
        await sqlite.aclose()


@pytest.fixture
async def pg_schema() -> AsyncIterator[str]:
    """A schema of its own per test, dropped afterwards (stores never delete anything)."""
    import psycopg
    from psycopg import sql

    dsn = pg_dsn()
    schema = f"rt_{uuid.uuid4().hex[:16]}"
    yield schema
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def counting_ids(prefix: str = "id") -> Callable[[], str]:
    counter = itertools.count()
    return lambda: f"{prefix}-{next(counter)}"


def ticking_clock() -> Callable[[], datetime]:
    moments = (datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=i) for i in itertools.count())
    return lambda: next(moments)


class FailingStore(InMemoryEventLogStore):
    """The reference store, except the `fail_at`-th append (1-based) raises; `trace` records
    every append and its outcome so tests can order them against model calls."""

    def __init__(self, fail_at: int, trace: list[tuple[str, Any]]) -> None:
        super().__init__()
        self.fail_at = fail_at
        self.appends = 0
        self.trace = trace

    async def append(self, *, thread_id: str, expected_index: int, entries: Any) -> int:
        self.appends += 1
        if self.appends == self.fail_at:
            self.trace.append(("append-failed", expected_index))
            raise AgentStoreError(f"injected failure at append {self.appends}")
        length = await super().append(thread_id=thread_id, expected_index=expected_index, entries=entries)
        self.trace.append(("appended", expected_index))
        return length


class RacingHosts:
    """Makes two hosts race for real: each host's store holds its first append until every host
    has read the thread, so both resume from the same length (as two servers would)."""

    def __init__(self, hosts: int) -> None:
        self.hosts = hosts
        self.reads = 0
        self.all_read = asyncio.Event()

    def wrap(self, store: Any) -> Any:
        race = self

        class Host:
            async def read(self, thread_id: str, from_index: int = 0) -> Any:
                entries = await store.read(thread_id, from_index)
                race.reads += 1
                if race.reads >= race.hosts:
                    race.all_read.set()
                return entries

            async def append(self, *, thread_id: str, expected_index: int, entries: Any) -> int:
                await race.all_read.wait()
                return int(await store.append(thread_id=thread_id, expected_index=expected_index, entries=entries))

            async def length(self, thread_id: str) -> int:
                return int(await store.length(thread_id))

        return Host()
