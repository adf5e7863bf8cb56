"""The PostgreSQL server the tests run against: `.ci/run` starts one and exports its DSN; locally
`scripts/pg_cluster.sh start DIR` prints one. Without it a PostgreSQL test skips, except under CI,
where a missing server must fail the run rather than pass it quietly."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from typing import Any

import pytest

PG_DSN_ENV = "AGENT_EXPLORER_TEST_PG_DSN"


def pg_dsn() -> str:
    """The test server's DSN; absent means skip locally, but under CI=true it is a failure."""
    dsn = os.environ.get(PG_DSN_ENV)
    if not dsn:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI=true but {PG_DSN_ENV} is not set: the PostgreSQL tests must run in CI (.ci/run starts a cluster)")
        pytest.skip(f"no PostgreSQL: set {PG_DSN_ENV} (scripts/pg_cluster.sh start DIR prints one)")
    return dsn


@contextlib.asynccontextmanager
async def schema_holding(
    prefix: str, threads: Mapping[str, Any], fill: Callable[[Any, Mapping[str, Any]], Awaitable[Iterable[str]]]
) -> AsyncIterator[str]:
    """A schema of its own on the test server holding `threads`; its URL (the schema dropped afterwards).

    `fill(store, threads)` appends them through the package and returns the ids of those whose first row must be
    written past the store (`threads[id][0]`, raw text: a row a foreign writer could leave), inserted here by SQL."""
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
