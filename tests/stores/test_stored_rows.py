"""Rows written outside the package, read back through the stores: every read checks them by the log reader's rules
(strict JSON text, contiguous indices from the start asked for, each entry's index its row's) and names the thread
and the index; nothing else ever escapes (no orjson error, no AttributeError, no RecursionError). Real SQLite files
and the real PostgreSQL server, with hypothesis choosing the row."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pg_server import pg_dsn

from agent_explorer.errors import AgentLogFormatError
from agent_explorer.stores.postgres import PostgresEventLogStore
from agent_explorer.stores.sqlite import SqliteEventLogStore

from .conftest import drop_schema, make_entries

ENTRIES = make_entries(0, 6)
TEXTS = [orjson.dumps(e).decode() for e in ENTRIES]

BODIES = st.one_of(
    st.text(max_size=40),
    st.sampled_from(TEXTS).map(lambda t: t.replace('"index":', '"index": ', 1)),
    st.sampled_from(TEXTS).map(lambda t: t.replace(',"event"', ',\n"event"', 1)),
    st.sampled_from(TEXTS).map(lambda t: '{"schemaVersion":1,' + t[1:]),  # a duplicate key
    st.sampled_from(TEXTS).map(lambda t: t[:-1] + ',"x":NaN}'),
    st.sampled_from(["[1]", "null", "3", '"s"', "{}", "[" * 1100 + "]" * 1100, "[" * 900 + "]" * 900]),
    st.recursive(st.integers() | st.text(max_size=5) | st.none(),
                 lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
                 max_leaves=8).map(json.dumps),
)


def _sqlite_file(path: Path, *, strict: bool = True) -> None:
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE agent_event_log (thread_id TEXT NOT NULL, idx INTEGER NOT NULL, id TEXT NOT NULL, body "
        + ("TEXT" if strict else "") + " NOT NULL, PRIMARY KEY (thread_id, idx))" + (" STRICT" if strict else "")
    )
    conn.executemany("INSERT INTO agent_event_log VALUES ('t', ?, ?, ?)",
                     [(e["index"], e["id"], text) for e, text in zip(ENTRIES, TEXTS, strict=True)])
    conn.commit()
    conn.close()


_TEMPLATE: list[Path] = []


def _template(factory: pytest.TempPathFactory) -> Path:
    """One loose-typed store file per session, copied per example (quicker than building each)."""
    if not _TEMPLATE:
        path = factory.mktemp("template") / "events.db"
        _sqlite_file(path, strict=False)
        _TEMPLATE.append(path)
    return _TEMPLATE[0]


def _set(path: Path, index: int, body: Any) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE agent_event_log SET body = ? WHERE idx = ?", (body, index))


async def _read_both(store: Any, start: int) -> tuple[Any, Any]:
    return await store.read("t", start), await store.read_raw("t", start)


def _expect(body: Any, index: int) -> list[dict[str, Any]] | None:
    """What a correct reader returns for the thread with `body` at `index`, or None if it must refuse."""
    if not isinstance(body, str):
        return None
    try:
        value = json.loads(body, object_pairs_hook=_unique, parse_constant=_refuse)
    except (ValueError, RecursionError):
        return None
    if value != ENTRIES[index]:
        return None
    return [*ENTRIES[:index], value, *ENTRIES[index + 1:]]


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len({k for k, _ in pairs}) != len(pairs):
        raise ValueError("duplicate")
    return dict(pairs)


def _refuse(name: str) -> Any:
    raise ValueError(name)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=BODIES | st.binary(max_size=30) | st.integers(-(2**63), 2**63 - 1), index=st.integers(0, 5), start=st.integers(0, 3))
def test_any_sqlite_row_reads_checked_or_is_one_format_error_naming_thread_and_index(
    tmp_path_factory: pytest.TempPathFactory, body: Any, index: int, start: int
) -> None:
    path = tmp_path_factory.mktemp("rows") / "events.db"
    shutil.copyfile(_template(tmp_path_factory), path)
    _set(path, index, body)
    store = SqliteEventLogStore(path, read_only=True)
    expected = _expect(body, index)
    try:
        entries, texts = asyncio.run(_read_both(store, start))
    except AgentLogFormatError as error:
        assert expected is None or index < start, (body, error)
        assert error.message.startswith("thread 't' in ") and f"index {index}" in error.message
        assert error.index == index
    else:
        assert expected is not None or index < start, body
        assert entries == ENTRIES[start:]
        assert len(texts) == len(entries) and [orjson.loads(t) for t in texts] == entries
    finally:
        asyncio.run(store.aclose())


@pytest.mark.parametrize("deleted", [0, 3, 5])
async def test_a_deleted_row_is_an_index_gap_from_any_start(tmp_path: Path, deleted: int) -> None:
    path = tmp_path / "events.db"
    _sqlite_file(path)
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM agent_event_log WHERE idx = ?", (deleted,))
    async with SqliteEventLogStore(path, read_only=True) as store:
        for start in range(0, 5):
            if deleted == 5 and start < 5:  # the last row: the thread just looks shorter (cannot be detected)
                assert len(await store.read("t", start)) == 5 - start
                continue
            if start > deleted:
                assert len(await store.read("t", start)) == 6 - start
                continue
            for read in (store.read, store.read_raw):
                with pytest.raises(AgentLogFormatError, match=f"index gap: expected a row at index {deleted}"):
                    await read("t", start)


async def test_a_non_utf8_body_is_named_by_index_and_never_quoted(tmp_path: Path) -> None:
    """Item 11: sqlite3's own message quoted the row's bytes (ESC, BEL, CR) straight to the terminal."""
    path = tmp_path / "events.db"
    _sqlite_file(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE agent_event_log SET body = CAST(? AS TEXT) WHERE idx = 2", (b"\x1b[2J\x07\r\xff",))
    async with SqliteEventLogStore(path, read_only=True) as store:
        with pytest.raises(AgentLogFormatError) as caught:
            await store.read("t")
        assert caught.value.index == 2 and "not valid UTF-8 (byte 6 of 7)" in caught.value.message
        assert "\x1b" not in caught.value.message and "\x07" not in caught.value.message
        assert await store.read("t", 3) == ENTRIES[3:]  # rows after it still read
        assert (await store.read("t", 0, 2)) == ENTRIES[:2]


# --- PostgreSQL ---------------------------------------------------------------------------------------------------


@pytest.mark.postgres
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=BODIES, index=st.integers(0, 5))
def test_any_postgres_row_reads_checked_or_is_one_format_error(body: str, index: int) -> None:
    if "\x00" in body:  # PostgreSQL text cannot hold NUL at all
        body = body.replace("\x00", "")
    asyncio.run(_postgres_case(pg_dsn(), body, index))


async def _postgres_case(dsn: str, body: str, index: int) -> None:
    import psycopg
    from psycopg import sql

    schema = f"r_{uuid.uuid4().hex[:16]}"
    store = PostgresEventLogStore(dsn, schema=schema)
    try:
        await store.append(thread_id="t", expected_index=0, entries=ENTRIES)
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            await conn.execute(sql.SQL("UPDATE {}.agent_event_log SET body = %s WHERE idx = %s").format(
                sql.Identifier(schema)), (body, index))
        expected = _expect(body, index)
        try:
            entries, texts = await _read_both(store, 0)
        except AgentLogFormatError as error:
            assert expected is None, (body, error)
            assert error.message.startswith(f"thread 't' in {schema}.agent_event_log: index {index}")
        else:
            assert expected is not None, body
            assert entries == ENTRIES and [orjson.loads(t) for t in texts] == ENTRIES
    finally:
        await store.aclose()
        await drop_schema(dsn, schema)
