"""open_store URLs, and moving threads between stores and JSONL files byte for byte."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from agent_explorer.errors import (
    AgentError,
    AgentEventLogConflictError,
    AgentLogFormatError,
)
from agent_explorer.stores import (
    copy_thread,
    export_thread_jsonl,
    import_thread_jsonl,
    open_store,
)
from agent_explorer.stores.memory import InMemoryEventLogStore
from agent_explorer.stores.sqlite import SqliteEventLogStore

from .conftest import PG_DSN_ENV, drop_schema, make_entries, pg_dsn


def test_memory_url_gives_a_fresh_store() -> None:
    assert isinstance(open_store("memory:"), InMemoryEventLogStore)
    assert open_store("memory:") is not open_store("memory:")


def test_sqlite_urls_follow_the_three_and_four_slash_convention(tmp_path: Path) -> None:
    relative = open_store("sqlite:///runs/x.db")
    assert isinstance(relative, SqliteEventLogStore) and relative.path == "runs/x.db"
    absolute = open_store(f"sqlite:///{tmp_path}/a%20b.db?synchronous=normal&busy_timeout=2.5&table=logs")
    assert isinstance(absolute, SqliteEventLogStore)
    assert absolute.path == f"{tmp_path}/a b.db"
    assert (absolute.synchronous, absolute.busy_timeout, absolute.table) == ("NORMAL", 2.5, "logs")


def test_a_report_names_the_store_without_the_read_only_mode_a_reader_added() -> None:
    from agent_explorer.fleet.refs import describe_store
    from agent_explorer.stores.urls import without_mode

    assert without_mode("sqlite:////data/p.db?mode=ro&table=t") == "sqlite:////data/p.db?table=t"
    assert without_mode("sqlite:////data/p.db?table=t&mode=ro") == "sqlite:////data/p.db?table=t"
    assert without_mode("sqlite:////data/p.db?mode=ro") == "sqlite:////data/p.db"  # four slashes kept
    assert without_mode("sqlite:///p.db") == "sqlite:///p.db"
    assert describe_store("postgresql://u:secret@h/db?mode=ro&schema=s") == "postgresql://u:***@h/db?schema=s"


def test_postgres_url_keeps_libpq_options_and_takes_ours() -> None:
    pytest.importorskip("psycopg")
    store = open_store("postgresql://u:p@db.example:6543/app?sslmode=require&schema=runs&table=log&max_size=4")
    assert store.schema == "runs" and store.table == "log"  # type: ignore[attr-defined]
    assert store.dsn == "postgresql://u:p@db.example:6543/app?sslmode=require"  # type: ignore[attr-defined]
    assert open_store("postgres://h/db").dsn == "postgres://h/db"  # type: ignore[attr-defined]


@pytest.mark.parametrize("url", ["", "runs.db", "mysql://h/db", "sqlite://host/x.db", "sqlite:///", "memory:/x",
                                 "sqlite:///x.db?cache=shared", "sqlite:///x.db?busy_timeout=soon"])
def test_bad_urls_are_refused_with_the_accepted_forms(url: str) -> None:
    with pytest.raises(AgentError, match="forms: memory:") as info:
        open_store(url)
    assert info.value.code == "invalid-argument"


async def test_copy_between_stores_is_byte_for_byte(tmp_path: Path) -> None:
    src = InMemoryEventLogStore()
    raw0 = ('{"schemaVersion":1, "id":"e0","index":0,"recordedAt":"2026-11-30T04:00:00.000Z","machineId":"m",'
            '"machineVersion":"1","event":{"type":"@agent.init","s":"\\u00e9 ✓ \\ud83d\\ude00"}}')
    await src.append(thread_id="t", expected_index=0, entries=[raw0])
    await src.append(thread_id="t", expected_index=1, entries=make_entries(1, 2499))
    async with SqliteEventLogStore(tmp_path / "dst.db") as dst:
        assert await copy_thread(src, "t", dst, "copy", batch_size=700) == 2500
        assert await dst.read_raw("copy") == await src.read_raw("t")
        # Copying onto a thread that already has entries is a conflict; nothing is added.
        with pytest.raises(AgentEventLogConflictError):
            await copy_thread(src, "t", dst, "copy")
        assert await dst.length("copy") == 2500
    with pytest.raises(AgentError, match="empty or does not exist") as info:
        await copy_thread(src, "nothing", InMemoryEventLogStore(), "x")
    assert info.value.code == "thread-not-found"


async def test_export_then_import_round_trips_exactly(tmp_path: Path) -> None:
    store = InMemoryEventLogStore()
    entries = make_entries(0, 50)
    entries[7]["event"]["text"] = "NUL \x00, RTL \u202eשלום\u202c, emoji \U0001F680"
    await store.append(thread_id="t", expected_index=0, entries=entries)
    out = tmp_path / "t.jsonl"
    assert await export_thread_jsonl(store, "t", out, batch_size=16) == 50
    lines = out.read_text("utf-8").split("\n")
    assert lines[-1] == "" and lines[:-1] == await store.read_raw("t")
    # Never overwrite.
    with pytest.raises(AgentError, match="already exists"):
        await export_thread_jsonl(store, "t", out)
    async with SqliteEventLogStore(tmp_path / "x.db") as sqlite_store:
        assert await import_thread_jsonl(sqlite_store, "imported", out, batch_size=7) == 50
        assert await sqlite_store.read_raw("imported") == await store.read_raw("t")
        assert (await sqlite_store.read("imported"))[7]["event"]["text"] == entries[7]["event"]["text"]


async def test_export_to_an_open_stream() -> None:
    store = InMemoryEventLogStore()
    await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 3))
    buffer = io.StringIO()
    assert await export_thread_jsonl(store, "t", buffer) == 3
    assert buffer.getvalue().count("\n") == 3


async def test_import_names_the_bad_line_and_writes_nothing(tmp_path: Path) -> None:
    good = [line for line in (await _exported(5)).splitlines()]
    cases = {
        "broken json": (good[:2] + ['{"schemaVersion":1,'] + good[3:], 3, False),
        "wrong index": (good[:1] + good[2:], 2, False),
        "duplicate id": (good[:3] + [good[3].replace('"id":"e3"', '"id":"e1"')] + good[4:], 4, False),
        "NaN": (good[:4] + [good[4].replace('"n":4', '"n":NaN')], 5, False),
    }
    for name, (lines, bad_line, _) in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(lines) + "\n", "utf-8")
        store = InMemoryEventLogStore()
        with pytest.raises(AgentLogFormatError) as info:
            await import_thread_jsonl(store, "t", path)
        assert info.value.line == bad_line, name
        assert str(path) in str(info.value)
        assert await store.length("t") == 0, name


async def test_truncated_last_line_is_flagged_or_dropped(tmp_path: Path) -> None:
    text = await _exported(4)
    path = tmp_path / "cut.jsonl"
    path.write_text(text[: len(text) - 30], "utf-8")  # the crash cut the last line short
    store = InMemoryEventLogStore()
    with pytest.raises(AgentLogFormatError) as info:
        await import_thread_jsonl(store, "t", path)
    assert info.value.truncated and info.value.line == 4 and info.value.valid_entries == 3
    assert await import_thread_jsonl(store, "t", path, on_truncated="drop") == 3


async def test_blank_lines_and_crlf_are_tolerated(tmp_path: Path) -> None:
    lines = (await _exported(3)).splitlines()
    path = tmp_path / "crlf.jsonl"
    path.write_bytes(("\r\n".join(lines) + "\r\n\r\n").encode("utf-8"))
    store = InMemoryEventLogStore()
    assert await import_thread_jsonl(store, "t", path) == 3
    assert await store.read_raw("t") == lines


async def test_copy_from_postgres_to_a_file_and_into_sqlite(tmp_path: Path) -> None:
    # The story: a recorded log moves from a production PostgreSQL to a file a colleague opens.
    if not os.environ.get(PG_DSN_ENV) and os.environ.get("CI", "").lower() != "true":
        pytest.skip(f"no PostgreSQL: set {PG_DSN_ENV}")
    dsn = pg_dsn()
    schema = f"t_copy_{os.getpid()}"
    pg = open_store(f"{dsn}?schema={schema}" if "?" not in dsn else f"{dsn}&schema={schema}")
    try:
        await pg.append(thread_id="prod", expected_index=0, entries=make_entries(0, 300))
        out = tmp_path / "prod.jsonl"
        assert await export_thread_jsonl(pg, "prod", out) == 300
        async with open_store(f"sqlite:///{tmp_path}/local.db") as local:
            assert await import_thread_jsonl(local, "prod", out) == 300
            assert await local.read_raw("prod") == await pg.read_raw("prod")
    finally:
        await pg.aclose()
        await drop_schema(dsn, schema)


async def _exported(n: int) -> str:
    store = InMemoryEventLogStore()
    await store.append(thread_id="t", expected_index=0, entries=make_entries(0, n))
    buffer = io.StringIO()
    await export_thread_jsonl(store, "t", buffer)
    return buffer.getvalue()


@pytest.mark.parametrize("url", ["memory:", "sqlite:///{tmp}/cli.db"])
def test_conformance_runs_as_a_plain_script(tmp_path: Path, url: str) -> None:
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "agent_explorer.stores.conformance", url.format(tmp=tmp_path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "ok  stale expected index is a conflict" in result.stdout
    assert result.stdout.strip().endswith("all conformance checks passed")
    bad = subprocess.run([sys.executable, "-m", "agent_explorer.stores.conformance"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "usage:" in bad.stderr
