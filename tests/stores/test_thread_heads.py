"""`thread_heads`: every thread's length, row count and last-entry digest in one query, on rows written outside the
package too (a gap, a body that is not UTF-8, a body that is not JSON), on real SQLite files and the real PostgreSQL
server; and the default for third-party stores, held to the same conformance check."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import orjson
import pytest
from pg_server import pg_dsn

from agent_explorer.stores.base import EventLogStore, ThreadHead, head_digest
from agent_explorer.stores.conformance import CONFORMANCE_CASES, run_conformance_case
from agent_explorer.stores.memory import InMemoryEventLogStore
from agent_explorer.stores.postgres import PostgresEventLogStore
from agent_explorer.stores.sqlite import SqliteEventLogStore

from .conftest import drop_schema, make_entries

HEADS_CASE = next(case for case in CONFORMANCE_CASES if case.name == "thread heads name each thread s end")


class _DefaultHeads(InMemoryEventLogStore):
    """A store that inherits `EventLogStore.thread_heads` (a third-party store that does not write its own)."""

    thread_heads = EventLogStore.thread_heads


class _StaleHeads(InMemoryEventLogStore):
    """Hashes the first entry instead of the last: a cache keyed on it would serve a grown thread as unchanged."""

    async def thread_heads(self, thread_ids=None):  # type: ignore[no-untyped-def]
        return [head._replace(digest=head_digest((await self.read_raw(head.thread_id, 0, 1))[0]))
                for head in await super().thread_heads(thread_ids)]


async def test_the_default_for_other_stores_conforms() -> None:
    await run_conformance_case(_DefaultHeads, HEADS_CASE)


async def test_the_conformance_check_catches_a_stale_head() -> None:
    with pytest.raises(AssertionError, match="thread heads name each thread s end"):
        await run_conformance_case(_StaleHeads, HEADS_CASE)


def _text(entry: dict) -> str:
    return orjson.dumps(entry).decode()


async def test_sqlite_heads_of_rows_written_outside_the_package(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    store = SqliteEventLogStore(path)
    for name in ("a-clean", "b-gap", "c-not-utf8", "d-not-json"):
        await store.append(thread_id=name, expected_index=0, entries=make_entries(0, 3, tag=name[0]))
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM agent_event_log WHERE thread_id = 'b-gap' AND idx = 1")
    conn.execute("UPDATE agent_event_log SET body = CAST(? AS TEXT) WHERE thread_id = 'c-not-utf8' AND idx = 2",
                 (b'{"x":"\xff\xfe"}',))
    conn.execute("UPDATE agent_event_log SET body = '{not json' WHERE thread_id = 'd-not-json' AND idx = 2")
    conn.commit()
    conn.close()
    heads = {head.thread_id: head for head in await store.thread_heads()}
    # The gap shows as fewer rows than the length; every digest is of the bytes as stored, read or not readable.
    assert heads["a-clean"] == ThreadHead("a-clean", 3, 3, head_digest(_text(make_entries(2, 1, tag="a")[0])))
    assert heads["b-gap"] == ThreadHead("b-gap", 3, 2, head_digest(_text(make_entries(2, 1, tag="b")[0])))
    assert heads["c-not-utf8"] == ThreadHead("c-not-utf8", 3, 3, hashlib.sha256(b'{"x":"\xff\xfe"}').digest())
    assert heads["d-not-json"].digest == hashlib.sha256(b"{not json").digest()
    assert await store.thread_heads(["d-not-json", "nobody"]) == [heads["d-not-json"]]
    await store.aclose()
    blocking = SqliteEventLogStore(path, read_only=True)
    assert blocking.sync.thread_heads(["a-clean"]) == [heads["a-clean"]]  # the blocking facade has it too
    blocking.sync.close()


async def test_sqlite_heads_of_a_thread_id_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    store = SqliteEventLogStore(path)
    await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 2))
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO agent_event_log SELECT CAST(? AS TEXT), idx, id, body FROM agent_event_log",
                 (b"bad-\xff",))
    conn.commit()
    conn.close()
    heads = await store.thread_heads()
    assert [bytes(h.thread_id) if isinstance(h.thread_id, bytes) else h.thread_id for h in heads] == [b"bad-\xff", "t"]
    assert heads[0].digest == heads[1].digest and heads[0].length == 2
    await store.aclose()


async def test_postgres_heads_of_rows_written_outside_the_package(pg_schema: str) -> None:
    store = PostgresEventLogStore(pg_dsn(), schema=pg_schema)
    try:
        for name in ("a-clean", "b-gap"):
            await store.append(thread_id=name, expected_index=0, entries=make_entries(0, 3, tag=name[0]))
        import psycopg

        with psycopg.connect(pg_dsn(), autocommit=True) as conn:
            conn.execute(f"DELETE FROM {pg_schema}.agent_event_log WHERE thread_id = 'b-gap' AND idx = 1")
            conn.execute(f"UPDATE {pg_schema}.agent_event_log SET body = '{{not json' WHERE thread_id = 'a-clean'"
                         " AND idx = 2")
        heads = await store.thread_heads()
        assert heads == [ThreadHead("a-clean", 3, 3, hashlib.sha256(b"{not json").digest()),
                         ThreadHead("b-gap", 3, 2, head_digest(_text(make_entries(2, 1, tag="b")[0])))]
        assert await store.thread_heads(["b-gap"]) == heads[1:]
    finally:
        await store.aclose()
        await drop_schema(pg_dsn(), pg_schema)
