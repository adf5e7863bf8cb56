"""Strict JSON text: the one reader of an entry's text, for log-file lines, JSON arrays and store rows alike.

Strict means what orjson enforces (no NaN/Infinity, valid UTF-8, nesting at most 1024 levels) plus what it
does not: no duplicate object keys. A reader that keeps the last of two equal keys and one that keeps the
first would see different events in the same text, so such text is refused, naming the key. Nothing here
recurses on the input's nesting, so any depth ends as a `JsonTextError`, never a `RecursionError`.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

import orjson

__all__ = ["JsonTextError", "find_duplicate_key", "loads_strict"]

# A JSON string token, or one structural character (text reaching the scanner is valid JSON already).
_TOKEN: Final = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],]', re.DOTALL)


class JsonTextError(ValueError):
    """Text that is not strict JSON; `problem` says why, `offset` (characters) where, when known."""

    def __init__(self, problem: str, offset: int | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.offset = offset


def loads_strict(raw: bytes | str) -> Any:
    """Parse `raw` as strict JSON; raise JsonTextError (never a RecursionError) otherwise."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        raise JsonTextError(f"not valid JSON ({error.msg} at column {error.colno})", error.pos) from None
    if type(value) is dict or type(value) is list:
        _refuse_duplicate_keys(raw, value)
    return value


def _refuse_duplicate_keys(raw: bytes | str, value: Any) -> None:
    # Fast path: text that is exactly orjson's own compact form of what it parsed to (what this package
    # writes) cannot hold a duplicate key, since the parsed dicts hold each key once.
    try:
        canonical: bytes | None = orjson.dumps(value)
    except orjson.JSONEncodeError:  # nesting beyond orjson's writer (254): the slow path decides
        canonical = None
    if canonical is not None:
        data = raw if isinstance(raw, bytes) else raw.encode("utf-8")
        if canonical == data.strip(b" \t\r\n"):
            return
    found = find_duplicate_key(raw)
    if found is not None:
        key, offset = found
        raise JsonTextError(
            f"duplicate key {key!r} in one object (readers disagree on which value counts: refused)", offset
        )


def _pairs_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _Duplicate
    return result


class _Duplicate(Exception):
    pass


def find_duplicate_key(raw: bytes | str) -> tuple[str, int] | None:
    """The first duplicate object key in valid JSON text and its character offset, or None."""
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    try:  # the C parser first: quick when there is none (the common case on this path)
        json.loads(text, object_pairs_hook=_pairs_without_duplicates)
        return None
    except (_Duplicate, RecursionError, ValueError):
        pass
    return _scan_for_duplicate(text)


def _scan_for_duplicate(text: str) -> tuple[str, int] | None:
    """Iterative (any depth): one set of keys per open object, None per open array."""
    stack: list[set[str] | None] = []
    expect_key = False
    for match in _TOKEN.finditer(text):
        token = match.group()
        first = token[0]
        if first == '"':
            if expect_key:
                keys = stack[-1]
                assert keys is not None
                key = json.loads(token)
                if key in keys:
                    return key, match.start()
                keys.add(key)
                expect_key = False
        elif first == "{":
            stack.append(set())
            expect_key = True
        elif first == "[":
            stack.append(None)
            expect_key = False
        elif first == ",":
            expect_key = bool(stack) and stack[-1] is not None
        else:  # } or ]
            if stack:
                stack.pop()
            expect_key = False
    return None
