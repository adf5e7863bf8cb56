"""Shared fixtures of the store tests: entry factories, temporary stores, the PostgreSQL DSN gate."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pg_server import PG_DSN_ENV, pg_dsn

STATE_HASH = "ab" * 32


def make_entry(index: int, *, tag: str = "", id: str | None = None, event: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """One entry in the wire format of docs/api.md §2; index 0 is the `@agent.init` entry."""
    entry: dict[str, Any] = {
        "schemaVersion": 1,
        "id": id if id is not None else f"{tag}e{index}",
        "index": index,
        "recordedAt": "2026-11-30T04:00:00.000Z",
        "machineId": "test-machine",
        "machineVersion": "1",
        "event": event if event is not None else ({"type": "@agent.init", "input": {}} if index == 0 else {"type": "TICK", "n": index}),
        "verification": {"stateHash": STATE_HASH},
    }
    if index == 0:
        entry["metadata"] = {"executionId": f"exec-{tag or 'test'}"}
    entry.update(extra)
    return entry


def make_entries(start: int, count: int, *, tag: str = "") -> list[dict[str, Any]]:
    return [make_entry(i, tag=tag) for i in range(start, start + count)]


@pytest.fixture
def pg_schema() -> str:
    """A schema name of its own for each test, so runs and tests never collide."""
    return f"t_{uuid.uuid4().hex[:16]}"


@pytest.fixture
async def pg_store(pg_schema: str) -> AsyncIterator[Any]:
    from agent_explorer.stores.postgres import PostgresEventLogStore

    dsn = pg_dsn()
    store = PostgresEventLogStore(dsn, schema=pg_schema)
    try:
        await store.length("reachability-check")
    except Exception as error:  # an unreachable server is a failure, never a silent skip
        await store.aclose()
        pytest.fail(f"PostgreSQL at {PG_DSN_ENV} is unreachable: {error}")
    yield store
    await store.aclose()
    await drop_schema(dsn, pg_schema)


async def drop_schema(dsn: str, schema: str) -> None:
    """Tests clean up their own schema; the store itself never deletes anything."""
    import psycopg
    from psycopg import sql

    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
