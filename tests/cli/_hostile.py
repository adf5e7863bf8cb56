"""Hostile inputs as a foreign writer makes them: log files edited by hand and store rows written with plain SQL
(real SQLite files, the real PostgreSQL server), each built from the shipped sample `support_clean.jsonl`."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "support_clean.jsonl"
MACHINE = "agent_explorer.samples.support:support_agent"
THREAD = "t"
DEEP_ARRAY = "[" * 1100 + "]" * 1100  # beyond orjson's 1024 levels
TERMINAL_ATTACK = "\x1b[2J\x1b[32mok: all good\x07\r"


def sample_lines() -> list[str]:
    return SAMPLE.read_text(encoding="utf-8").splitlines()


def with_duplicate_key(line: str) -> str:
    """`line` with `schemaVersion` twice: a last-wins reader sees a valid entry, a first-wins one a bad one."""
    assert line.startswith('{"schemaVersion":1,')
    return '{"schemaVersion":2,' + line[1:]


def with_field(line: str, text: str) -> str:
    """`line` (a compact entry) with `text` spliced in right after `"schemaVersion":1`."""
    assert '"schemaVersion":1,' in line
    return line.replace('"schemaVersion":1,', '"schemaVersion":1,' + text, 1)


# --- log files ------------------------------------------------------------------------------------------


def hostile_files() -> dict[str, bytes]:
    """Log files whose every line but one is the sample's; each must give one line and exit 2."""
    lines = sample_lines()

    def jsonl(replaced: dict[int, str] | None = None, drop: int | None = None) -> bytes:
        out = [line for i, line in enumerate(lines) if i != drop]
        for i, text in (replaced or {}).items():
            out[i] = text
        return ("\n".join(out) + "\n").encode("utf-8")

    entries = [json.loads(line) for line in lines]

    def array(element: str) -> bytes:
        return ("[\n" + ",\n".join(json.dumps(e) for e in entries[:3]) + ",\n" + element + "\n]\n").encode("utf-8")

    return {
        "not-json-line": jsonl({3: "not json"}),
        "nan-line": jsonl({3: with_field(lines[3], '"x":NaN,')}),
        "infinity-line": jsonl({3: with_field(lines[3], '"x":-Infinity,')}),
        "deep-line": jsonl({3: DEEP_ARRAY}),
        "array-line": jsonl({3: "[1,2]"}),
        "null-line": jsonl({3: "null"}),
        "duplicate-key-line": jsonl({3: with_duplicate_key(lines[3])}),
        "terminal-escapes-line": jsonl({3: TERMINAL_ATTACK}),
        "index-gap": jsonl(drop=5),
        "swapped": jsonl({5: lines[6], 6: lines[5]}),
        "deep-array-element": array("[" * 1000 + "]" * 1000),
        "deep-array-object": array('{"a":' * 1000 + "1" + "}" * 1000),
        "duplicate-key-array": array(with_duplicate_key(lines[3])),
        "not-utf8": jsonl().replace(b"Backpack", b"Back\xff\xfepack", 1),
    }


# --- store rows -----------------------------------------------------------------------------------------

Mutation = Callable[[Any], None]  # gets a DB-API cursor over the store's table


def _set_body(index: int, body: Any) -> Mutation:
    return lambda cur: cur.execute("UPDATE agent_event_log SET body = {p} WHERE thread_id = {p} AND idx = {p}",
                                   (body, THREAD, index))


def hostile_rows() -> dict[str, Mutation]:
    """Changes a foreign writer makes to a thread holding the sample (SQL with `{p}` for the placeholder)."""
    lines = sample_lines()
    return {
        "not-json": _set_body(3, "not json"),
        "nan": _set_body(3, with_field(lines[3], '"x":NaN,')),
        "deep": _set_body(3, DEEP_ARRAY),
        "array": _set_body(3, "[1,2]"),
        "null": _set_body(3, "null"),
        "duplicate-key": _set_body(3, with_duplicate_key(lines[3])),
        "terminal-escapes": _set_body(3, TERMINAL_ATTACK),
        "index-mismatch": _set_body(3, lines[4].replace("support-clean:0004", "support-clean:dup")),
        "row-deleted": lambda cur: cur.execute("DELETE FROM agent_event_log WHERE thread_id = {p} AND idx = 5", (THREAD,)),
        "first-row-deleted": lambda cur: cur.execute("DELETE FROM agent_event_log WHERE thread_id = {p} AND idx = 0",
                                                     (THREAD,)),
    }


def sqlite_only_rows() -> dict[str, Mutation]:
    """What only SQLite can hold: TEXT that is not UTF-8 (carrying terminal escapes)."""
    return {
        "not-utf8": lambda cur: cur.execute(
            "UPDATE agent_event_log SET body = CAST({p} AS TEXT) WHERE thread_id = {p} AND idx = 3",
            (TERMINAL_ATTACK.encode() + b"\xff", THREAD)),
    }


def loose_sqlite_rows() -> dict[str, Mutation]:
    """What a table created without STRICT (no declared type on body) holds: a BLOB or an integer body."""
    lines = sample_lines()
    return {"blob-body": _set_body(3, lines[3].encode("utf-8")), "integer-body": _set_body(3, 7)}


def build_sqlite(path: Path, mutate: Mutation | None, *, strict: bool = True, thread_id: Any = THREAD) -> str:
    """A SQLite store file holding the sample as thread `thread_id`, then `mutate`d with plain SQL; its URL."""
    lines = sample_lines()
    conn = sqlite3.connect(path)
    types = ("TEXT", "TEXT", " STRICT") if strict else ("", "", "")
    conn.execute(
        f"CREATE TABLE agent_event_log (thread_id {types[0]} NOT NULL, idx INTEGER NOT NULL, id TEXT NOT NULL,"
        f" body {types[1]} NOT NULL, PRIMARY KEY (thread_id, idx), UNIQUE (thread_id, id)){types[2]}"
    )
    conn.executemany("INSERT INTO agent_event_log VALUES (?, ?, ?, ?)",
                     [(thread_id, i, json.loads(line)["id"], line) for i, line in enumerate(lines)])
    if mutate is not None:
        mutate(_Cursor(conn.cursor(), "?"))
    conn.commit()
    conn.close()
    return f"sqlite:///{path}"


async def build_postgres(dsn: str, mutate: Mutation | None, *, body_type: str = "text") -> tuple[str, str]:
    """A schema of its own on the test server holding the sample as thread `t`, then `mutate`d; (URL, schema)."""
    import psycopg
    from psycopg import sql

    schema = f"h_{uuid.uuid4().hex[:16]}"
    lines = sample_lines()
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        await conn.execute(sql.SQL(
            "CREATE TABLE {}.agent_event_log (thread_id text COLLATE \"C\" NOT NULL, idx bigint NOT NULL,"
            " id text NOT NULL, body " + body_type + " NOT NULL, PRIMARY KEY (thread_id, idx), UNIQUE (thread_id, id))"
        ).format(sql.Identifier(schema)))
        await conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        async with conn.cursor() as cur:
            await cur.executemany(
                "INSERT INTO agent_event_log VALUES (%s, %s, %s, %s)",
                [(THREAD, i, json.loads(line)["id"], line) for i, line in enumerate(lines)],
            )
            if mutate is not None:
                statements: list[tuple[str, tuple[Any, ...]]] = []
                mutate(_Recorder(statements))
                for statement, params in statements:
                    await cur.execute(statement.replace("{p}", "%s"), params)  # type: ignore[arg-type]
    sep = "&" if "?" in dsn else "?"
    return f"{dsn}{sep}schema={schema}", schema


async def drop_postgres(dsn: str, schema: str) -> None:
    import psycopg
    from psycopg import sql

    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


class _Cursor:
    """A DB-API cursor that fills `{p}` with the driver's placeholder."""

    def __init__(self, cursor: Any, placeholder: str) -> None:
        self._cursor, self._placeholder = cursor, placeholder

    def execute(self, statement: str, params: tuple[Any, ...] = ()) -> None:
        self._cursor.execute(statement.replace("{p}", self._placeholder), params)


class _Recorder:
    def __init__(self, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
        self._statements = statements

    def execute(self, statement: str, params: tuple[Any, ...] = ()) -> None:
        self._statements.append((statement, params))
