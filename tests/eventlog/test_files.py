"""Log files: JSONL and JSON arrays, detected by content; errors name the line; writes are atomic."""

from __future__ import annotations

import json
import os
import stat
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_explorer.canonical.jcs import state_hash
from agent_explorer.canonical.strict import MAX_SAFE_INTEGER
from agent_explorer.errors import AgentError, AgentLogFormatError
from agent_explorer.eventlog.files import iter_log, read_log, write_log

from .conftest import build_log

BIG = 100_000
GARBLED_LINE = 50_001
STREAMED = 20_000  # tracemalloc slows allocation-heavy code several-fold; this is plenty


def jsonl(entries: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(e) + b"\n" for e in entries)


def many_entries(count: int) -> list[dict[str, Any]]:
    """`count` valid entries built from one template (fast enough for 100,000 lines)."""
    first, template = build_log(2)
    entries = [first]
    for index in range(1, count):
        entry = dict(template)
        entry["index"] = index
        entry["id"] = f"e{index}"
        entries.append(entry)
    return entries


@pytest.fixture(scope="module")
def big_entries() -> list[dict[str, Any]]:
    return many_entries(BIG)


@pytest.fixture(scope="module")
def big_lines(big_entries: list[dict[str, Any]]) -> list[bytes]:
    return [orjson.dumps(e) + b"\n" for e in big_entries]


def expect_error(path: Path, **kwargs: Any) -> AgentLogFormatError:
    with pytest.raises(AgentLogFormatError) as caught:
        read_log(path, **kwargs)
    assert caught.value.code == "log-format"
    return caught.value


# ---------------------------------------------------------------------------------------------
# Round trips and format detection


@pytest.mark.parametrize("name", ["run.jsonl", "run.json", "run.log"])
def test_write_then_read_round_trips(tmp_path: Path, name: str) -> None:
    entries = build_log(25)
    path = tmp_path / name
    assert write_log(path, entries) == 25
    assert read_log(path) == entries
    assert list(iter_log(path)) == entries
    text = path.read_text()
    if name.endswith(".json"):
        assert json.loads(text) == entries  # a plain JSON array any tool can read
        assert text.count("\n") == 27  # "[", one line per entry, "]"
    else:
        assert [json.loads(line) for line in text.splitlines()] == entries


def test_format_is_detected_by_content_not_name(tmp_path: Path) -> None:
    entries = build_log(5)
    array_named_jsonl = tmp_path / "array.jsonl"
    write_log(array_named_jsonl, entries, format="json")
    assert array_named_jsonl.read_bytes().startswith(b"[")
    assert read_log(array_named_jsonl) == entries
    lines_named_json = tmp_path / "lines.json"
    write_log(lines_named_json, entries, format="jsonl")
    assert lines_named_json.read_bytes().startswith(b"{")
    assert read_log(lines_named_json) == entries


def test_whitespace_bom_crlf_and_blank_lines_are_tolerated(tmp_path: Path) -> None:
    entries = build_log(4)
    body = b"\r\n\r\n".join(orjson.dumps(e) for e in entries)
    path = tmp_path / "dos.jsonl"
    path.write_bytes(b"\xef\xbb\xbf  \n\r\n" + body + b"\r\n\n   \n")
    assert read_log(path) == entries
    array = tmp_path / "bom.json"
    array.write_bytes(b"\xef\xbb\xbf\n  " + orjson.dumps(entries))
    assert read_log(array) == entries


@pytest.mark.parametrize("content", [b"", b"   \n\n\t", b"\xef\xbb\xbf"])
def test_an_empty_file_is_an_empty_log(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(content)
    assert read_log(path) == []


def test_a_final_entry_without_newline_is_complete_not_truncated(tmp_path: Path) -> None:
    entries = build_log(3)
    path = tmp_path / "no-newline.jsonl"
    path.write_bytes(jsonl(entries)[:-1])
    assert read_log(path) == entries


def test_an_int_beyond_64_bits_that_is_a_double_round_trips(tmp_path: Path) -> None:
    entries = build_log(2)
    entries[1] = {**entries[1], "metadata": {"big": 10**20, "safe": 2**53}}
    path = tmp_path / "big.jsonl"
    write_log(path, entries)
    assert read_log(path) == entries


# ---------------------------------------------------------------------------------------------
# Errors name the line


def test_a_file_that_is_neither_format_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b"\n\n  hello")
    error = expect_error(path)
    assert error.line == 1 and "starts with b'h'" in str(error)
    assert "SQLite" not in str(error)


def test_a_sqlite_store_given_as_a_log_file_is_named_as_one_with_the_url_to_use(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "runs.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x)")
    conn.close()
    error = expect_error(path)
    assert f"It is a SQLite database: name one of its threads as sqlite:///{path}#THREAD" in str(error)


def test_100k_jsonl_with_a_garbled_middle_line_and_a_truncated_end(
    tmp_path: Path, big_lines: list[bytes]
) -> None:
    lines = list(big_lines)
    lines[GARBLED_LINE - 1] = lines[GARBLED_LINE - 1][:40] + b"#garbage#" + lines[GARBLED_LINE - 1][60:]
    lines[-1] = lines[-1][: len(lines[-1]) // 2]  # cut mid-entry, no newline: a crash mid-write
    path = tmp_path / "both.jsonl"
    path.write_bytes(b"".join(lines))
    # The garbled line is an error wherever truncation is tolerated: dropping is only for the end.
    for mode in ("error", "drop"):
        error = expect_error(path, on_truncated=mode)
        assert error.line == GARBLED_LINE and error.truncated is False
        assert error.valid_entries == GARBLED_LINE - 1
        assert f"line {GARBLED_LINE}" in str(error) and "not valid JSON" in str(error)
        assert str(path) in str(error)


def test_100k_jsonl_truncated_at_the_end_reports_and_recovers(
    tmp_path: Path, big_lines: list[bytes], big_entries: list[dict[str, Any]]
) -> None:
    lines = list(big_lines)
    lines[-1] = lines[-1][:-30]
    path = tmp_path / "truncated.jsonl"
    path.write_bytes(b"".join(lines))
    error = expect_error(path)
    assert error.truncated is True and error.line == BIG
    assert error.valid_entries == BIG - 1
    assert f"{BIG - 1} entries before it are valid" in str(error)
    assert "on_truncated='drop'" in str(error)
    assert read_log(path, on_truncated="drop") == big_entries[:-1]


def test_a_bad_line_that_ends_in_newline_is_malformed_not_truncated(tmp_path: Path) -> None:
    entries = build_log(3)
    path = tmp_path / "bad-last.jsonl"
    path.write_bytes(jsonl(entries) + b'{"schemaVersion": 1, "id"\n')
    error = expect_error(path, on_truncated="drop")
    assert error.line == 4 and error.truncated is False


def test_iter_log_streams_entries_up_to_the_bad_line(tmp_path: Path) -> None:
    entries = build_log(6)
    path = tmp_path / "stream.jsonl"
    path.write_bytes(jsonl(entries[:3]) + b"not json\n" + jsonl(entries[3:]))
    stream = iter_log(path)
    assert [next(stream) for _ in range(3)] == entries[:3]
    with pytest.raises(AgentLogFormatError) as caught:
        next(stream)
    assert caught.value.line == 4


def _write_lines(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.write_bytes(jsonl(entries))
    return path


def test_index_gap_is_named(tmp_path: Path) -> None:
    entries = build_log(6)
    error = expect_error(_write_lines(tmp_path / "gap.jsonl", entries[:3] + entries[4:]))
    assert error.line == 4 and error.index == 4 and error.valid_entries == 3
    assert "expected index 3, found 4" in str(error)


def test_duplicate_index_is_named(tmp_path: Path) -> None:
    entries = build_log(4)
    duplicate = {**entries[2], "id": "other"}
    error = expect_error(_write_lines(tmp_path / "dup.jsonl", entries[:3] + [duplicate]))
    assert error.line == 4 and error.index == 2
    assert "duplicate index 2" in str(error)


def test_duplicate_id_is_named(tmp_path: Path) -> None:
    entries = build_log(4)
    entries[3] = {**entries[3], "id": entries[1]["id"]}
    error = expect_error(_write_lines(tmp_path / "dupid.jsonl", entries))
    assert error.line == 4 and error.index == 3
    assert f"duplicate id {entries[1]['id']!r} at index 3" in str(error)


def test_the_first_entry_must_be_the_init_entry(tmp_path: Path) -> None:
    entries = build_log(3)
    headless = {**entries[1], "index": 0}
    error = expect_error(_write_lines(tmp_path / "headless.jsonl", [headless]))
    assert error.line == 1 and error.index == 0 and "@agent.init" in str(error)


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        pytest.param({"recordedAt": "yesterday"}, "recordedAt", id="recorded-at"),
        pytest.param({"schemaVersion": 2}, "schemaVersion must be 1", id="schema"),
        pytest.param({"verification": {"stateHash": "xyz"}}, "stateHash", id="hash"),
        pytest.param({"metadata": {"n": 2**53 + 1}}, "metadata.n", id="unsafe-int"),
        pytest.param({"metadata": {"n": -(2**60) - 1}}, "metadata.n", id="unsafe-negative-int"),
    ],
)
def test_an_invalid_entry_names_its_line_and_field(
    tmp_path: Path, change: dict[str, Any], fragment: str
) -> None:
    entries = build_log(4)
    entries[2] = {**entries[2], **change}
    error = expect_error(_write_lines(tmp_path / "field.jsonl", entries))
    assert error.line == 3 and error.valid_entries == 2
    assert fragment in str(error) and "line 3" in str(error)


def test_long_digit_strings_that_are_not_numbers_are_fine(tmp_path: Path) -> None:
    entries = build_log(3)
    entries[1] = {**entries[1], "id": "1234567890123456789012", "metadata": {"n": 2**53}}
    assert read_log(_write_lines(tmp_path / "digits.jsonl", entries)) == entries


@pytest.mark.parametrize(
    ("line", "kind"), [(b"[1, 2]", "array"), (b'"text"', "string"), (b"42", "number")]
)
def test_a_line_that_is_not_an_object_is_named(tmp_path: Path, line: bytes, kind: str) -> None:
    entries = build_log(2)
    path = tmp_path / "kinds.jsonl"
    path.write_bytes(jsonl(entries) + line + b"\n")
    error = expect_error(path)
    assert error.line == 3 and f"JSON {kind}" in str(error)


# ---------------------------------------------------------------------------------------------
# JSON arrays


def test_a_truncated_array_reports_and_recovers(tmp_path: Path) -> None:
    entries = build_log(10)
    path = tmp_path / "cut.json"
    write_log(path, entries)
    data = path.read_bytes()
    path.write_bytes(data[: data.rindex(b"\n{") + 50])  # cut inside the last entry
    error = expect_error(path)
    assert error.truncated is True and error.valid_entries == 9
    assert read_log(path, on_truncated="drop") == entries[:9]


def test_a_malformed_array_names_the_line(tmp_path: Path) -> None:
    entries = build_log(5)
    path = tmp_path / "bad.json"
    write_log(path, entries)
    lines = path.read_bytes().split(b"\n")
    lines[3] = lines[3].replace(b'"index":2', b'"index":2,,')
    path.write_bytes(b"\n".join(lines))
    error = expect_error(path, on_truncated="drop")
    assert error.line == 4 and error.truncated is False


def test_an_invalid_array_element_names_its_line(tmp_path: Path) -> None:
    entries = build_log(5)
    entries[3] = {**entries[3], "index": 7}
    path = tmp_path / "gap.json"
    path.write_bytes(b"[\n" + b",\n".join(orjson.dumps(e) for e in entries) + b"\n]\n")
    error = expect_error(path)
    assert error.line == 5 and error.index == 7 and "expected index 3, found 7" in str(error)


def test_an_array_of_non_entries_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "numbers.json"
    path.write_bytes(b"[1, 2]")
    error = expect_error(path)
    assert error.line == 1 and "JSON number" in str(error)


# ---------------------------------------------------------------------------------------------
# Writing


def test_a_refused_write_leaves_the_old_file_and_no_debris(tmp_path: Path) -> None:
    path = tmp_path / "keep.jsonl"
    good = build_log(3)
    write_log(path, good)
    before = path.read_bytes()
    bad = build_log(5)
    bad[4] = {**bad[4], "index": 9}
    with pytest.raises(AgentLogFormatError) as caught:
        write_log(path, bad)
    assert caught.value.index == 9 and "writing entry 4" in str(caught.value)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.jsonl"]


def test_write_streams_from_a_generator_and_keeps_the_file_mode(tmp_path: Path) -> None:
    path = tmp_path / "gen.jsonl"
    path.write_bytes(b"")
    os.chmod(path, 0o640)
    assert write_log(path, (e for e in build_log(7))) == 7
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert len(read_log(path)) == 7
    fresh = tmp_path / "fresh.jsonl"
    write_log(fresh, build_log(2))
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644


def test_write_refuses_non_json_and_unknown_formats(tmp_path: Path) -> None:
    entries = build_log(2)
    entries[1] = {**entries[1], "metadata": {"nan": float("nan")}}
    with pytest.raises(AgentLogFormatError, match="metadata.nan"):
        write_log(tmp_path / "nan.jsonl", entries)
    with pytest.raises(AgentError) as caught:
        write_log(tmp_path / "x.csv", build_log(1), format="csv")  # type: ignore[arg-type]
    assert caught.value.code == "invalid-argument"
    with pytest.raises(AgentError) as caught:
        read_log(tmp_path / "x.jsonl", on_truncated="ignore")  # type: ignore[arg-type]
    assert caught.value.code == "invalid-argument"
    with pytest.raises(AgentError):  # at the call, before any iteration
        iter_log(tmp_path / "x.jsonl", on_truncated="ignore")  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError):
        read_log(tmp_path / "missing.jsonl")
    assert not list(tmp_path.iterdir())


def test_an_empty_log_writes_and_reads_back(tmp_path: Path) -> None:
    for name in ("empty.jsonl", "empty.json"):
        write_log(tmp_path / name, [])
        assert read_log(tmp_path / name) == []


# ---------------------------------------------------------------------------------------------
# Streaming memory


def test_iter_log_does_not_hold_the_file(tmp_path: Path, big_lines: list[bytes]) -> None:
    path = tmp_path / "stream.jsonl"
    path.write_bytes(b"".join(big_lines[:STREAMED]))
    size = path.stat().st_size
    tracemalloc.start()
    try:
        count = sum(1 for _ in iter_log(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == STREAMED
    # One line at a time plus the set of ids (refusing duplicates needs it, ~130 bytes an entry):
    # about half of these small 355-byte lines, never a copy of the file.
    assert peak < 0.6 * size, (peak, size)


# ---------------------------------------------------------------------------------------------
# Round-trip property: any strict-JSON payload survives a file exactly, hash included


json_payloads = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-MAX_SAFE_INTEGER, max_value=MAX_SAFE_INTEGER)
    | st.sampled_from([2**53, 10**20, 2**64, -(2**60)])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=("Cs",)), max_size=8),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(st.characters(exclude_categories=("Cs",)), max_size=5), children, max_size=4),
    max_leaves=25,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(payload=json_payloads, as_array=st.booleans())
def test_payloads_round_trip_through_files_exactly(
    tmp_path: Path, payload: Any, as_array: bool
) -> None:
    entries = build_log(2)
    entries[1] = {**entries[1], "event": {**entries[1]["event"], "payload": payload}}
    path = tmp_path / ("p.json" if as_array else "p.jsonl")
    write_log(path, entries)
    again = read_log(path)
    # Equal as values and as hashes (an int beyond 64 bits may come back as the equal double,
    # exactly as JavaScript reads it).
    assert again == entries
    assert state_hash(again[1]["event"]) == state_hash(entries[1]["event"])
