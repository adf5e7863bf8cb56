"""Every CLI verb over hostile inputs: log files edited by hand, and store rows written with plain SQL into real
SQLite files and the real PostgreSQL server. Each must end as one line on stderr and exit 2 (1 where the verb's
answer is "does not verify"), never a traceback, never a raw control character, never a partial file."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pg_server import pg_dsn

from agent_explorer.cli import main

from ._hostile import (
    MACHINE,
    THREAD,
    build_postgres,
    build_sqlite,
    drop_postgres,
    hostile_files,
    hostile_rows,
    loose_sqlite_rows,
    sqlite_only_rows,
)

RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # everything but \t and \n
FOLLOW_STATUS = re.compile(r"^agent-explorer: (following|caught up)")

SINGLE_LOG_VERBS: dict[str, list[str]] = {
    "verify": ["verify", "{log}", "--machine", MACHINE],
    "verify --json": ["verify", "{log}", "--json", "--machine", MACHINE],
    "show": ["show", "{log}"],
    "html": ["html", "{log}", "-o", "{out}/page.html", "--machine", MACHINE],
    "export to a file": ["export", "{log}", "{out}/copy.jsonl"],
    "export to a store": ["export", "{log}", "sqlite:///{out}/copy.db#copy"],
}
FOLLOW_VERBS: dict[str, list[str]] = {
    "verify --follow": ["verify", "{log}", "--follow", "--machine", MACHINE],
    "show --follow": ["show", "{log}", "--follow"],
}


def run(argv: list[str], capsys: Any, **values: str) -> tuple[int, str, str]:
    code = main([part.format(**values) for part in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_error_line(code: int, out: str, err: str, *, allow_status: bool = False) -> str:
    lines = [line for line in err.splitlines() if not (allow_status and FOLLOW_STATUS.match(line))]
    assert code == 2, (code, out, err)
    assert len(lines) == 1, err
    assert lines[0].startswith("agent-explorer: error"), err
    assert "Traceback" not in err
    assert not RAW_CONTROL.search(out + err), (out, err)
    return lines[0]


# --- stores -------------------------------------------------------------------------------------------------------


def _sqlite_cases() -> dict[str, tuple[Any, bool]]:
    cases: dict[str, tuple[Any, bool]] = {name: (mutate, True) for name, mutate in hostile_rows().items()}
    cases.update({name: (mutate, True) for name, mutate in sqlite_only_rows().items()})
    cases.update({name: (mutate, False) for name, mutate in loose_sqlite_rows().items()})
    return cases


SQLITE_CASES = _sqlite_cases()
PG_CASES = {name: (mutate, "text") for name, mutate in hostile_rows().items()} | {"jsonb-body": (None, "jsonb")}


@pytest.fixture(params=sorted(SQLITE_CASES))
def sqlite_log(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    mutate, strict = SQLITE_CASES[request.param]
    return build_sqlite(tmp_path / "hostile.db", mutate, strict=strict) + f"#{THREAD}"


@pytest.fixture(params=sorted(PG_CASES))
def pg_log(request: pytest.FixtureRequest) -> Iterator[str]:
    dsn = pg_dsn()
    mutate, body_type = PG_CASES[request.param]
    url, schema = asyncio.run(build_postgres(dsn, mutate, body_type=body_type))
    try:
        yield f"{url}#{THREAD}"
    finally:
        asyncio.run(drop_postgres(dsn, schema))


def _every_verb_refuses(log: str, tmp_path: Path, capsys: Any) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    messages = set()
    for verb, argv in {**SINGLE_LOG_VERBS, **FOLLOW_VERBS}.items():
        code, out, err = run(argv, capsys, log=log, out=str(out_dir))
        line = assert_one_error_line(code, out, err, allow_status=verb in FOLLOW_VERBS)
        assert f"thread '{THREAD}'" in line, (verb, line)  # the thread and the index are named
        assert re.search(r"\bindex(es)? \d+", line), (verb, line)
        messages.add(line)
    assert len(messages) == 1, messages  # one rule, one message, whichever verb reads
    assert sorted(p.name for p in out_dir.iterdir() if not p.name.endswith(".db")) == []  # no partial file
    store_url = log.partition("#")[0]
    code, out, err = run(["verify", store_url, "--all-threads", "--machine", MACHINE], capsys)
    assert code == 1 and err == "", (code, out, err)  # kept: the damaged thread is an error row, not a stop
    assert f"thread {THREAD}: could not verify" in out
    assert not RAW_CONTROL.search(out)
    code, out, err = run(["threads", "--store", store_url], capsys)
    assert (code, err) == (0, "") and "(1 thread)" in out


@pytest.mark.timeout(120)
def test_every_verb_refuses_a_damaged_sqlite_row_in_one_line(sqlite_log: str, tmp_path: Path, capsys: Any) -> None:
    _every_verb_refuses(sqlite_log, tmp_path, capsys)


@pytest.mark.postgres
@pytest.mark.timeout(120)
def test_every_verb_refuses_a_damaged_postgres_row_in_one_line(pg_log: str, tmp_path: Path, capsys: Any) -> None:
    _every_verb_refuses(pg_log, tmp_path, capsys)


# --- log files ----------------------------------------------------------------------------------------------------

FILE_VERBS = {**{k: v for k, v in SINGLE_LOG_VERBS.items()}, "import": ["import", "{log}", "sqlite:///{out}/in.db#t"]}


@pytest.mark.parametrize("case", sorted(hostile_files()))
def test_every_verb_refuses_a_hostile_log_file_in_one_line(case: str, tmp_path: Path, capsys: Any) -> None:
    log = tmp_path / "hostile.jsonl"
    log.write_bytes(hostile_files()[case])
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    for verb, argv in FILE_VERBS.items():
        code, out, err = run(argv, capsys, log=str(log), out=str(out_dir))
        line = assert_one_error_line(code, out, err)
        assert "line " in line, (verb, line)
    leftovers = [p.name for p in out_dir.iterdir() if not p.name.endswith(".db")]
    assert leftovers == []


def test_the_console_script_prints_no_traceback_and_no_escape(tmp_path: Path) -> None:
    """The real entry point (a subprocess): a non-UTF-8 row carrying ESC/BEL/CR is named, never quoted."""
    log = build_sqlite(tmp_path / "s.db", sqlite_only_rows()["not-utf8"]) + f"#{THREAD}"
    done = subprocess.run([sys.executable, "-m", "agent_explorer.cli", "show", log],
                          capture_output=True, timeout=120, check=False)
    assert done.returncode == 2, done
    assert done.stderr.count(b"\n") == 1 and b"Traceback" not in done.stderr
    assert not re.search(rb"[\x00-\x08\x0b-\x1f\x7f]", done.stderr)
    assert b"index 3" in done.stderr and b"not valid UTF-8" in done.stderr


# --- items 9, 10, 11 on their own ---------------------------------------------------------------------------------


def test_export_of_a_thread_with_a_deleted_row_is_refused_and_writes_nothing(tmp_path: Path, capsys: Any) -> None:
    """Item 10: once "copied 12 entries", 11 lines written, exit 0."""
    log = build_sqlite(tmp_path / "s.db", hostile_rows()["row-deleted"]) + f"#{THREAD}"
    code, out, err = run(["export", log, str(tmp_path / "copy.jsonl")], capsys)
    assert code == 2 and "index gap" in err and "row 5 is missing" in err
    assert not (tmp_path / "copy.jsonl").exists()
    code, out, err = run(["show", log, "--limit", "0"], capsys)
    assert code == 2 and "of 11 entries" not in out


def test_export_of_a_row_spread_over_two_lines_writes_one_line_per_entry(tmp_path: Path, capsys: Any) -> None:
    """Item 10: a foreign row's JSON on two lines is exported as one line, so the JSONL reads back and verifies."""
    from ._hostile import sample_lines

    lines = sample_lines()
    two = lines[3].replace(',"event"', ',\n"event"', 1)
    log = build_sqlite(tmp_path / "s.db", lambda cur: cur.execute(
        "UPDATE agent_event_log SET body = {p} WHERE idx = 3", (two,))) + f"#{THREAD}"
    target = tmp_path / "copy.jsonl"
    code, out, err = run(["export", log, str(target)], capsys)
    assert (code, err) == (0, "") and "copied 12 entries" in out
    written = target.read_text(encoding="utf-8").splitlines()
    assert len(written) == 12
    assert written[:3] == lines[:3] and written[4:] == lines[4:]  # one-line rows travel byte for byte
    assert main(["verify", str(target), "--machine", MACHINE]) == 0


def test_export_refuses_a_dangling_link_as_target(tmp_path: Path, capsys: Any) -> None:
    log = build_sqlite(tmp_path / "s.db", None) + f"#{THREAD}"
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "elsewhere.jsonl")
    code, out, err = run(["export", log, str(tmp_path / "link.jsonl")], capsys)
    assert code == 2 and "already exists" in err
    assert not (tmp_path / "elsewhere.jsonl").exists()


def test_threads_lists_a_thread_id_stored_as_a_number(tmp_path: Path, capsys: Any) -> None:
    """Item 9: an integer thread id (a table without STRICT types) is listed as what it is, not a crash."""
    url = build_sqlite(tmp_path / "s.db", None, strict=False, thread_id=5)
    code, out, err = run(["threads", "--store", url], capsys)
    assert (code, err) == (0, "")
    assert "5 (integer, not text)" in out and "(1 thread)" in out
    code, out, err = run(["verify", url, "--all-threads", "--machine", MACHINE], capsys)
    assert code == 1 and "thread 5: could not verify" in out


def test_a_nul_thread_id_is_one_error_row_of_verify_all_threads(tmp_path: Path, capsys: Any) -> None:
    """Item 9: the NUL thread sorts first; it once stopped the whole run with exit 2."""
    path = tmp_path / "s.db"
    url = build_sqlite(path, None)
    build_sqlite(tmp_path / "other.db", None, thread_id="a\x00b")
    import sqlite3

    with sqlite3.connect(path) as conn:
        conn.execute("ATTACH DATABASE ? AS other", (str(tmp_path / "other.db"),))
        conn.execute("INSERT INTO agent_event_log SELECT * FROM other.agent_event_log")
    code, out, err = run(["verify", url, "--all-threads", "--machine", MACHINE], capsys)
    assert code == 1 and err == "", (out, err)
    assert "1 thread of" in out and "thread a\\x00b: could not verify" in out
    assert "1 could not be verified" in out


def test_a_thread_id_that_is_not_utf8_is_listed_escaped_and_is_one_error_row(tmp_path: Path, capsys: Any) -> None:
    """Item 9/11: sqlite3 could not decode the id and its error quoted the raw bytes (ESC included)."""
    import sqlite3

    from ._hostile import sample_lines

    path = tmp_path / "s.db"
    url = build_sqlite(path, None)
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO agent_event_log VALUES (CAST(? AS TEXT), 0, 'x', ?)",
                     (b"\x1b[31mred\xff", sample_lines()[0]))
    code, out, err = run(["threads", "--store", url], capsys)
    assert (code, err) == (0, "") and "(2 threads)" in out
    assert "\\x1b[31mred\\xff" in out and not RAW_CONTROL.search(out)
    code, out, err = run(["verify", url, "--all-threads", "--machine", MACHINE], capsys)
    assert code == 1 and err == "" and not RAW_CONTROL.search(out)
    assert "1 thread of" in out and "1 could not be verified" in out
