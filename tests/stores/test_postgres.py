"""The PostgreSQL store against a real server (AGENT_EXPLORER_TEST_PG_DSN): conformance, schema, errors."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import psycopg
import pytest
from psycopg import sql

from agent_explorer.errors import (
    AgentError,
    AgentEventLogConflictError,
    AgentStoreError,
)
from agent_explorer.stores.conformance import (
    CONFORMANCE_CASES,
    ConformanceCase,
    run_conformance_case,
)
from agent_explorer.stores.postgres import PostgresEventLogStore

from .conftest import drop_schema, make_entries, make_entry, pg_dsn

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def dsn() -> str:
    return pg_dsn()  # type: ignore[return-value]


@pytest.fixture
async def schema(dsn: str, pg_schema: str) -> AsyncIterator[str]:
    yield pg_schema
    await drop_schema(dsn, pg_schema)


@pytest.mark.parametrize("case", CONFORMANCE_CASES, ids=lambda case: case.id)
async def test_postgres_store_conforms(dsn: str, schema: str, case: ConformanceCase) -> None:
    await run_conformance_case(lambda: PostgresEventLogStore(dsn, schema=schema), case)


async def test_entries_are_text_never_jsonb_and_keep_their_exact_bytes(dsn: str, pg_store: PostgresEventLogStore) -> None:
    raw = ('{"schemaVersion":1,"id":"e0","index":0,"recordedAt":"2026-11-30T04:00:00.000Z","machineId":"m",'
           '"machineVersion":"1","event":{"type":"@agent.init","b":1,"a":{"z":"\\u0000 שלום \\ud83d\\ude00","y":1.50}}}')
    await pg_store.append(thread_id="t", expected_index=0, entries=[raw])
    assert await pg_store.read_raw("t") == [raw]
    entry = (await pg_store.read("t"))[0]
    assert entry["event"]["a"]["z"] == "\x00 שלום \U0001F600"
    async with await psycopg.AsyncConnection.connect(dsn) as conn:
        cur = await conn.execute(
            "SELECT data_type, collation_name FROM information_schema.columns WHERE table_schema = %s"
            " AND table_name = 'agent_event_log' ORDER BY ordinal_position", [pg_store.schema])
        columns = await cur.fetchall()
    assert columns == [("text", "C"), ("bigint", None), ("text", None), ("text", None)]


async def test_migrations_are_idempotent_even_when_concurrent(dsn: str, schema: str) -> None:
    stores = [PostgresEventLogStore(dsn, schema=schema) for _ in range(6)]
    try:
        # Six first uses at once all create-if-missing the same schema and table without error.
        assert await asyncio.gather(*(s.length("t") for s in stores)) == [0] * 6
        await stores[0].append(thread_id="t", expected_index=0, entries=make_entries(0, 2))
    finally:
        for store in stores:
            await store.aclose()
    async with PostgresEventLogStore(dsn, schema=schema) as again:
        assert await again.length("t") == 2


async def test_schema_and_table_names_are_validated_identifiers(dsn: str) -> None:
    for bad in ('public"; DROP TABLE x; --', "", "9lives", "a b", "x" * 41):
        with pytest.raises(AgentError, match="not a plain SQL identifier") as info:
            PostgresEventLogStore(dsn, schema=bad)
        assert info.value.code == "invalid-argument"
        with pytest.raises(AgentError, match="not a plain SQL identifier"):
            PostgresEventLogStore(dsn, table=bad)


async def test_custom_table_name(dsn: str, schema: str) -> None:
    async with PostgresEventLogStore(dsn, schema=schema, table="runs") as store:
        await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 3))
        await store.fork(thread_id="t", new_thread_id="f", up_to_index=2)
        assert await store.list_threads() == [("f", 2), ("t", 3)]


async def test_an_existing_table_is_used_without_ddl_rights(dsn: str, schema: str) -> None:
    # A read-only role (as on a production server) can open an existing log: no DDL is attempted.
    async with PostgresEventLogStore(dsn, schema=schema) as store:
        await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 2))
    role = f"ro_{schema}"
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        await conn.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(schema), sql.Identifier(role)))
        await conn.execute(sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}").format(sql.Identifier(schema), sql.Identifier(role)))
    try:
        ro_dsn = dsn.replace("postgres@", f"{role}@", 1)
        async with PostgresEventLogStore(ro_dsn, schema=schema) as reader:
            assert [e["index"] for e in await reader.read("t")] == [0, 1]
            # Writing is refused by the server, and surfaces as a store error naming the table.
            with pytest.raises(AgentStoreError, match=f"{schema}.agent_event_log"):
                await reader.append(thread_id="t", expected_index=2, entries=[make_entry(2)])
    finally:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            await conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
            await conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


async def test_unreachable_server_is_a_store_error() -> None:
    store = PostgresEventLogStore("postgresql://nobody@127.0.0.1:9/none?connect_timeout=1", timeout=1.0)
    with pytest.raises(AgentStoreError, match="connect") as info:
        await store.length("t")
    assert info.value.code == "store-error"
    await store.aclose()


async def test_text_parameters_work_too(dsn: str, schema: str) -> None:
    async with PostgresEventLogStore(dsn, schema=schema, param_format="text") as store:
        await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 5))
        with pytest.raises(AgentEventLogConflictError):
            await store.append(thread_id="t", expected_index=3, entries=[make_entry(3)])
        assert await store.read("t") == make_entries(0, 5)


def test_one_store_serves_callers_on_any_event_loop(dsn: str, pg_schema: str) -> None:
    # As the explorer does in a notebook: asyncio.run per call, from several threads, plus the
    # blocking facade; the pool stays on the store's own loop thread throughout.
    store = PostgresEventLogStore(dsn, schema=pg_schema)
    try:
        assert asyncio.run(store.append(thread_id="t", expected_index=0, entries=make_entries(0, 2))) == 2
        assert asyncio.run(store.length("t")) == 2

        def in_another_thread() -> int:
            return asyncio.run(store.append(thread_id="t", expected_index=2, entries=[make_entry(2)]))

        import concurrent.futures

        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            assert pool.submit(in_another_thread).result() == 3
        assert store.sync.length("t") == 3
        assert [e["index"] for e in asyncio.run(store.read("t"))] == [0, 1, 2]
    finally:
        asyncio.run(store.aclose())
        asyncio.run(drop_schema(dsn, pg_schema))
    with pytest.raises(AgentStoreError, match="closed"):
        asyncio.run(store.length("t"))


async def test_a_loop_bound_store_skips_the_hop_and_refuses_other_loops(dsn: str, schema: str) -> None:
    store = PostgresEventLogStore(dsn, schema=schema, dedicated_loop=False)
    try:
        await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 2))
        with pytest.raises(AgentStoreError, match="dedicated_loop=False"):
            await asyncio.to_thread(lambda: asyncio.run(store.length("t")))
        assert await store.length("t") == 2
    finally:
        await store.aclose()


@pytest.mark.parametrize("dedicated_loop", [True, False], ids=["dedicated-loop", "caller-loop"])
async def test_conformance_in_both_loop_modes(dsn: str, schema: str, dedicated_loop: bool) -> None:
    from agent_explorer.stores import assert_event_log_store_conformance

    await assert_event_log_store_conformance(lambda: PostgresEventLogStore(dsn, schema=schema, dedicated_loop=dedicated_loop))


async def test_connect_kwargs_reach_the_connections(dsn: str, schema: str) -> None:
    # As behind pgbouncer in transaction mode: no server-side prepared statements, ever.
    async with PostgresEventLogStore(dsn, schema=schema, connect_kwargs={"prepare_threshold": None, "application_name": "ae-test"}) as store:
        for i in range(8):
            await store.append(thread_id="t", expected_index=i, entries=[make_entry(i)])
        async with await psycopg.AsyncConnection.connect(dsn) as conn:
            cur = await conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ae-test'")
            assert (await cur.fetchone())[0] >= 1  # type: ignore[index]
        assert await store.length("t") == 8


def test_sync_facade_against_postgres(dsn: str, pg_schema: str) -> None:
    store = PostgresEventLogStore(dsn, schema=pg_schema)
    try:
        store.sync.append(thread_id="t", expected_index=0, entries=make_entries(0, 3))
        assert store.sync.length("t") == 3
        assert store.sync.list_threads() == [("t", 3)]
    finally:
        store.sync.close()
        asyncio.run(drop_schema(dsn, pg_schema))


async def test_close_while_calls_are_in_flight(dsn: str, schema: str) -> None:
    import threading

    before = set(threading.enumerate())
    store = PostgresEventLogStore(dsn, schema=schema)
    await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 1))
    queued = [asyncio.create_task(store.length("t")) for _ in range(20)]
    await asyncio.sleep(0)
    await store.aclose()
    results = await asyncio.gather(*queued, return_exceptions=True)
    assert all(r == 1 or isinstance(r, AgentStoreError) for r in results), results
    with pytest.raises(AgentStoreError, match="closed"):
        await store.length("t")
    assert not [t for t in set(threading.enumerate()) - before if t.name.startswith("agent-explorer-postgres")]


async def test_a_call_blocked_on_the_server_ends_with_a_store_error_when_the_store_closes(dsn: str, schema: str) -> None:
    store = PostgresEventLogStore(dsn, schema=schema)
    await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 1))
    async with await psycopg.AsyncConnection.connect(dsn) as locker:
        # Another session holds the table exclusively, so the store's read waits on the server.
        await locker.execute(sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(sql.Identifier(schema, "agent_event_log")))
        blocked = asyncio.create_task(store.read("t"))
        await asyncio.sleep(0.3)
        assert not blocked.done()
        await asyncio.wait_for(store.aclose(), 30)
        with pytest.raises(AgentStoreError, match="closed while this call ran"):
            await asyncio.wait_for(blocked, 10)
        await locker.rollback()
