"""A store file or a PostgreSQL schema holding a set of threads for a test, some of whose rows a foreign writer
wrote past the store's checks (what a disk fault or another program could leave behind). The fleet's and the run
list's suites build their stores this way."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
from pg_server import PG_DSN_ENV, pg_dsn

from agent_explorer.stores.sqlite import SqliteEventLogStore

#: `fill(store, threads)` appends the threads through the package and returns the ids of those whose first row
#: must be written past the store: `threads[id][0]`, raw text, inserted here by SQL.
Fill = Callable[[Any, Mapping[str, Any]], Awaitable[Iterable[str]]]


def sqlite_holding(path: Path, threads: Mapping[str, Any], fill: Fill) -> str:
    """A SQLite file at `path` holding `threads`; its URL."""

    async def build() -> list[str]:
        store = SqliteEventLogStore(path)
        try:
            return list(await fill(store, threads))
        finally:
            await store.aclose()

    raw = asyncio.run(build())
    with sqlite3.connect(path) as conn:
        for thread_id in raw:
            conn.execute("INSERT INTO agent_event_log (thread_id, idx, id, body) VALUES (?, 0, ?, ?)",
                         (thread_id, f"{thread_id}-0", threads[thread_id][0]))
    return f"sqlite:///{path}"


@contextlib.asynccontextmanager
async def schema_holding(
    prefix: str, threads: Mapping[str, Any], fill: Fill
) -> AsyncIterator[str]:
    """A schema of its own on the test server holding `threads`; its URL (the schema dropped afterwards)."""
    import psycopg
    from psycopg import sql

    from agent_explorer.stores.postgres import PostgresEventLogStore

    dsn = pg_dsn()
    schema = f"{prefix}_{uuid.uuid4().hex[:12]}"
    store = PostgresEventLogStore(dsn, schema=schema)
    try:
        raw = list(await fill(store, threads))
    except Exception as error:  # an unreachable server is a failure, never a silent skip
        await store.aclose()
        pytest.fail(f"PostgreSQL at {PG_DSN_ENV} is unreachable or refused the threads: {error}")
    await store.aclose()
    table = sql.Identifier(schema, "agent_event_log")
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        for thread_id in raw:
            await conn.execute(
                sql.SQL("INSERT INTO {} (thread_id, idx, id, body) VALUES (%s, 0, %s, %s)").format(table),
                (thread_id, f"{thread_id}-0", threads[thread_id][0]),
            )
    separator = "&" if "?" in dsn else "?"
    try:
        yield f"{dsn}{separator}schema={schema}"
    finally:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            await conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def sqlite_store_of(path: Path, threads: Mapping[str, list[dict[str, Any]]]) -> str:
    """A SQLite file at `path` holding each thread's entries, appended through the package; its URL."""

    async def build() -> None:
        store = SqliteEventLogStore(path)
        try:
            for thread_id, entries in threads.items():
                await store.append(thread_id=thread_id, expected_index=0, entries=entries)
        finally:
            await store.aclose()

    asyncio.run(build())
    return f"sqlite:///{path}"
