"""Strict JSON text, one rule for log files and store rows: duplicate keys refused (naming the key and the line),
any nesting depth an error and never a RecursionError; and hypothesis over hostile log-file lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_explorer.errors import AgentLogFormatError
from agent_explorer.eventlog.files import read_log, write_log
from agent_explorer.eventlog.json_text import JsonTextError, find_duplicate_key, loads_strict

from .conftest import build_log
from .test_files import json_payloads

KEY_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=6)


def test_a_duplicate_key_is_refused_at_any_depth_naming_it() -> None:
    assert loads_strict('{"a":1,"b":{"c":[{"d":1}]}}') == {"a": 1, "b": {"c": [{"d": 1}]}}
    for text, key in [('{"a":1,"a":2}', "a"), ('{"x":[{"k":1, "k" :2}]}', "k"), ('[{"é":0,"\\u00e9":1}]', "é")]:
        with pytest.raises(JsonTextError, match="duplicate key") as caught:
            loads_strict(text)
        assert repr(key) in caught.value.problem
        assert caught.value.offset is not None and text[caught.value.offset] == '"'
    # The same key in sibling objects, or a key equal to a value, is no duplicate.
    assert loads_strict('[{"a":1},{"a":2},{"b":"b"}]') == [{"a": 1}, {"a": 2}, {"b": "b"}]


def test_any_nesting_depth_ends_as_an_error_or_a_value_never_a_recursion_error() -> None:
    for depth in (300, 999, 1024, 1025, 5000):
        text = "[" * depth + "]" * depth
        try:
            loads_strict(text)
        except JsonTextError:
            assert depth > 1024
        else:
            assert depth <= 1024
        assert find_duplicate_key('{"a":' * depth + "1" + "}" * depth) is None
    deep_duplicate = '{"a":' * 990 + '{"k":1,"k":2}' + "}" * 990
    assert find_duplicate_key(deep_duplicate) == ("k", deep_duplicate.index('"k"', deep_duplicate.index('"k"') + 1))


def _log_lines(tmp_path: Path) -> list[bytes]:
    path = tmp_path / "ok.jsonl"
    write_log(path, build_log(4))
    return path.read_bytes().splitlines(keepends=True)


def test_a_log_file_line_with_a_duplicate_key_is_refused_naming_key_and_line(tmp_path: Path) -> None:
    """Item 14: files once kept the last of two keys while stores refused them."""
    lines = _log_lines(tmp_path)
    lines[2] = b'{"index":2,' + lines[2][1:]  # the index twice: first-wins and last-wins readers differ
    path = tmp_path / "dup.jsonl"
    path.write_bytes(b"".join(lines))
    with pytest.raises(AgentLogFormatError, match=r"line 3: duplicate key 'index'") as caught:
        read_log(path)
    assert caught.value.line == 3 and caught.value.valid_entries == 2


def test_a_json_array_element_with_a_duplicate_key_is_refused_naming_its_line(tmp_path: Path) -> None:
    entries = build_log(3)
    text = "[\n" + ",\n".join(json.dumps(e) for e in entries) + "\n]\n"
    text = text.replace('"schemaVersion": 1', '"schemaVersion": 1, "schemaVersion": 1', 1)  # the first element
    path = tmp_path / "dup.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(AgentLogFormatError, match=r"line 2: duplicate key 'schemaVersion'"):
        read_log(path)


@pytest.mark.parametrize("element", ["[" * 1000 + "]" * 1000, '{"a":' * 1000 + "1" + "}" * 1000])
def test_a_json_array_whose_bad_element_nests_a_thousand_deep_is_a_format_error(tmp_path: Path, element: str) -> None:
    """Item 6: locating the bad element once ended in RecursionError."""
    entries = build_log(3)
    path = tmp_path / "deep.json"
    path.write_text("[\n" + ",\n".join(json.dumps(e) for e in entries) + ",\n" + element + "\n]\n", encoding="utf-8")
    with pytest.raises(AgentLogFormatError, match=r"line 5: element 3") as caught:
        read_log(path)
    assert caught.value.line == 5


# --- properties ---------------------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(value=json_payloads, indent=st.sampled_from([None, 1]), ascii=st.booleans())
def test_strict_text_reads_as_the_standard_parser_does_when_keys_are_unique(value: Any, indent: Any, ascii: bool) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=ascii)
    assert loads_strict(text) == orjson.loads(text)
    assert loads_strict(text.encode("utf-8")) == orjson.loads(text)


@settings(max_examples=150, deadline=None)
@given(pairs=st.dictionaries(KEY_TEXT, json_payloads, min_size=1, max_size=4), pick=st.integers(0, 3),
       wrap=st.integers(0, 3))
def test_a_repeated_key_is_always_found(pairs: dict[str, Any], pick: int, wrap: int) -> None:
    key = sorted(pairs)[pick % len(pairs)]
    body = ",".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in pairs.items())
    text = "{" + body + f",{json.dumps(key)}:null" + "}"
    text = "[" * wrap + text + "]" * wrap
    with pytest.raises(JsonTextError) as caught:
        loads_strict(text)
    assert caught.value.problem.startswith(f"duplicate key {key!r}")


LINE_TEXT = st.one_of(
    st.binary(max_size=60),
    st.text(max_size=60).map(lambda s: s.encode("utf-8", "surrogatepass")),
    json_payloads.map(lambda v: json.dumps(v).encode()),
    st.sampled_from([b"NaN", b"[" * 1100 + b"]" * 1100, b'{"a":1,"a":1}', b"null", b"\xff\xfe", b"{", b"\x1b[2J"]),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=LINE_TEXT, where=st.integers(0, 3))
def test_any_line_in_a_log_file_reads_or_is_one_format_error(tmp_path: Path, line: bytes, where: int) -> None:
    lines = _log_lines(tmp_path)
    lines[where] = line.replace(b"\n", b" ").replace(b"\r", b" ") + b"\n"
    path = tmp_path / "fuzzed.jsonl"
    path.write_bytes(b"".join(lines))
    try:
        entries = read_log(path)
    except AgentLogFormatError as error:
        assert error.line is not None and error.line <= 4
        assert error.valid_entries <= where
    else:  # only a line that is itself a valid entry, in its place, can pass
        assert [e["index"] for e in entries] == list(range(len(entries)))
