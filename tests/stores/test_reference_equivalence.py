"""Property: any sequence of operations gives the SQLite store the same outcomes as the reference.

Outcomes are compared whole: return values, error classes with their code and conflict fields, and the
final contents of every thread, so a divergence anywhere in the contract shows up as a minimal example.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_explorer.errors import AgentError, AgentEventLogConflictError
from agent_explorer.stores.base import EventLogStore
from agent_explorer.stores.memory import InMemoryEventLogStore
from agent_explorer.stores.sqlite import SqliteEventLogStore

from .conftest import PG_DSN_ENV, drop_schema, make_entry, pg_dsn

THREADS = ["a", "b", "a/b"]

operation = st.one_of(
    st.tuples(st.just("append"), st.sampled_from(THREADS), st.integers(-2, 2), st.integers(0, 4), st.booleans()),
    st.tuples(st.just("fork"), st.sampled_from(THREADS), st.sampled_from(THREADS + ["f1", "f2"]), st.integers(-1, 3)),
    st.tuples(st.just("read"), st.sampled_from(THREADS + ["f1"]), st.integers(0, 6), st.none() | st.integers(0, 8)),
)


_THREAD_FIELDS = {"append": {1}, "fork": {1, 2}, "read": {1}}


async def apply(store: EventLogStore, ops: list[tuple[Any, ...]], prefix: str = "") -> list[Any]:
    """Run `ops` with every thread id under `prefix` (so examples sharing a database never meet)."""
    outcomes: list[Any] = []
    serial = 0
    for op in ops:
        op = tuple(prefix + part if i in _THREAD_FIELDS[op[0]] else part for i, part in enumerate(op))
        try:
            if op[0] == "append":
                _, thread, offset, count, reuse_id = op
                length = await store.length(thread)
                expected = max(0, length + offset)
                entries = []
                for k in range(count):
                    serial += 1
                    entry_id = "e0" if reuse_id and k == count - 1 else f"id{serial}"
                    entries.append(make_entry(expected + k, id=entry_id))
                outcomes.append(await store.append(thread_id=thread, expected_index=expected, entries=entries))
            elif op[0] == "fork":
                _, thread, new, delta = op
                up = await store.length(thread) + delta
                outcomes.append(await store.fork(thread_id=thread, new_thread_id=new, up_to_index=max(up, 0)))
            else:
                _, thread, start, limit = op
                outcomes.append([e["id"] for e in await store.read(thread, start, limit=limit)])
        except AgentEventLogConflictError as error:
            outcomes.append(("conflict", error.thread_id.removeprefix(prefix), error.expected_index, error.actual_length))
        except AgentError as error:
            outcomes.append((type(error).__name__, error.code))
    listed = await store.list_threads(limit=10_000)
    outcomes.append([(t.removeprefix(prefix), n) for t, n in listed if t.startswith(prefix)])
    for thread in THREADS + ["f1", "f2"]:
        outcomes.append(await store.read_raw(prefix + thread))
    return outcomes


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operation, min_size=1, max_size=14))
def test_sqlite_matches_the_reference(ops: list[tuple[Any, ...]]) -> None:
    async def run() -> tuple[list[Any], list[Any]]:
        with tempfile.TemporaryDirectory() as directory:
            async with SqliteEventLogStore(Path(directory) / "p.db", synchronous="NORMAL") as sqlite_store:
                return await apply(InMemoryEventLogStore(), ops), await apply(sqlite_store, ops)

    reference, sqlite_outcomes = asyncio.run(run())
    assert sqlite_outcomes == reference


@pytest.mark.postgres
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(ops=st.lists(operation, min_size=1, max_size=14))
def test_postgres_matches_the_reference(shared_schema: str, ops: list[tuple[Any, ...]]) -> None:
    from agent_explorer.stores.postgres import PostgresEventLogStore

    dsn = pg_dsn()
    prefix = f"{uuid.uuid4().hex[:8]}:"

    async def run() -> tuple[list[Any], list[Any]]:
        async with PostgresEventLogStore(dsn, schema=shared_schema) as pg:
            return await apply(InMemoryEventLogStore(), ops), await apply(pg, ops, prefix)

    reference, pg_outcomes = asyncio.run(run())
    assert pg_outcomes == reference


@pytest.fixture
def shared_schema(pg_schema: str) -> Any:
    """One schema for all examples of a test (each example uses its own thread prefix), dropped after."""
    yield pg_schema
    if os.environ.get(PG_DSN_ENV):
        asyncio.run(drop_schema(os.environ[PG_DSN_ENV], pg_schema))
