"""Canonical hashing: RFC 8785 (JCS) canonical JSON and its SHA-256, identical to JavaScript's.

JCS pins key order to UTF-16 code units and number text to ECMAScript's Number::toString, so a hash
computed here equals one computed by a JavaScript host over the same JSON. Pure: no I/O, no
mutation; every value is validated as strict JSON first (a non-JSON value is an error, never hashed).
"""

from __future__ import annotations

import hashlib
from json.encoder import encode_basestring  # C-accelerated
from typing import Any, Final

import orjson

from agent_explorer.canonical.strict import (
    MAX_SAFE_INTEGER,
    NEEDS_UTF16_KEY_ORDER,
    PLAIN_DECIMAL_FLOOR,
    format_number,
    json_flags,
)

__all__ = ["canonical_json", "canonical_json_bytes", "format_number", "state_hash"]

_SORT_KEYS: Final = orjson.OPT_SORT_KEYS


def state_hash(value: object) -> str:
    """Lowercase hex SHA-256 of the JCS canonical JSON of `value` (a persisted snapshot, usually).

    On the replay hot path: one validating scan, then orjson writes the text whenever the scan
    proved orjson's output is already canonical (no astral keys, no numbers it formats unlike
    ECMAScript); otherwise the exact canonicaliser below does.
    """
    return hashlib.sha256(canonical_json_bytes(value)).hexdigest()


def canonical_json(value: object) -> str:
    """The RFC 8785 canonical JSON text of `value`; raises NonSerializableAgentEventError if not JSON."""
    return canonical_json_bytes(value).decode("utf-8")


def canonical_json_bytes(value: object) -> bytes:
    """UTF-8 bytes of canonical_json(value), without a decode/encode round trip."""
    flags = json_flags(value)
    try:
        # With flags, hand orjson pre-formatted text for exactly the parts it would get wrong.
        return orjson.dumps(_patch(value) if flags else value, option=_SORT_KEYS)
    except (orjson.JSONEncodeError, RecursionError):
        pass  # nesting beyond orjson's (or the interpreter's) depth: the exact path has no limit
    return _canonical_text(value, flags & NEEDS_UTF16_KEY_ORDER != 0).encode("utf-8")


_Fragment: Final = orjson.Fragment  # pre-serialized JSON text


def _patch(value: Any) -> Any:
    """`value` with every number orjson would print unlike ECMAScript, and every object whose keys
    need UTF-16 order, replaced by an orjson.Fragment of its canonical text.

    Copy-on-write: untouched subtrees are the caller's own objects, so the common case allocates
    little. Only for already-validated values (json_flags ran).
    """
    t = type(value)
    if t is dict:
        for key in value:
            if not key.isascii() and max(key) > "\uffff":
                return _Fragment(_object_text(value))
        # The dict and list branches below repeat one loop on purpose: a shared helper over
        # items()/enumerate() made _patch ~9% slower on integral snapshots (benchmarks/hashing.py).
        patched: dict[str, Any] | None = None
        for key, item in value.items():
            kind = type(item)
            if kind is str or item is None or kind is bool:
                continue
            if kind is int and -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
                continue
            new = _patch(item)
            if new is not item:
                if patched is None:
                    patched = dict(value)
                patched[key] = new
        return value if patched is None else patched
    if t is list:
        patched_list: list[Any] | None = None
        for position, item in enumerate(value):
            kind = type(item)
            if kind is str or item is None or kind is bool:
                continue
            if kind is int and -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
                continue
            new = _patch(item)
            if new is not item:
                if patched_list is None:
                    patched_list = list(value)
                patched_list[position] = new
        return value if patched_list is None else patched_list
    if t is float:
        if value.is_integer() or -PLAIN_DECIMAL_FLOOR < value < PLAIN_DECIMAL_FLOOR:
            return _Fragment(format_number(value).encode())
        return value
    if t is int:  # beyond 2**53 (json_flags admitted it: JavaScript reads it as this double)
        return _Fragment(format_number(float(value)).encode())
    return value


def _object_text(value: dict[str, Any]) -> bytes:
    parts = [
        encode_basestring(key).encode() + b":" + orjson.dumps(_patch(value[key]), option=_SORT_KEYS)
        for key in sorted(value, key=_utf16_order)
    ]
    return b"{" + b",".join(parts) + b"}"


class _Raw(str):
    """Already-canonical text queued on the output stack (never a value: values are exact str)."""

    __slots__ = ()


_OPEN_OBJECT: Final = _Raw("{")
_CLOSE_OBJECT: Final = _Raw("}")
_OPEN_ARRAY: Final = _Raw("[")
_CLOSE_ARRAY: Final = _Raw("]")
_COMMA: Final = _Raw(",")
_EMPTY_OBJECT: Final = _Raw("{}")
_EMPTY_ARRAY: Final = _Raw("[]")


def _utf16_order(key: str) -> bytes:
    # Big-endian UTF-16 bytes compare exactly as the code-unit sequences JCS sorts by.
    return key.encode("utf-16-be")


def _canonical_text(root: object, utf16_keys: bool) -> str:
    """Exact JCS writer for already-validated values; iterative, so nesting depth is unbounded."""
    out: list[str] = []
    stack: list[Any] = [root]
    push = stack.append
    while stack:
        value = stack.pop()
        t = type(value)
        if t is _Raw:
            out.append(value)
        elif t is str:
            out.append(encode_basestring(value))
        elif t is dict:
            if not value:
                out.append(_EMPTY_OBJECT)
                continue
            keys = sorted(value, key=_utf16_order) if utf16_keys else sorted(value)
            push(_CLOSE_OBJECT)
            for position in range(len(keys) - 1, -1, -1):
                key = keys[position]
                push(value[key])
                push(_Raw(encode_basestring(key) + ":"))
                if position:
                    push(_COMMA)
            out.append(_OPEN_OBJECT)
        elif t is list:
            if not value:
                out.append(_EMPTY_ARRAY)
                continue
            push(_CLOSE_ARRAY)
            for position in range(len(value) - 1, -1, -1):
                push(value[position])
                if position:
                    push(_COMMA)
            out.append(_OPEN_ARRAY)
        elif value is None:
            out.append("null")
        elif t is bool:
            out.append("true" if value else "false")
        elif t is int:
            out.append(
                str(value) if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER
                else format_number(float(value))
            )
        else:  # float (json_flags admitted nothing else)
            out.append(format_number(value))
    return "".join(out)
