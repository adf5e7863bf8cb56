"""Strict JSON: decide whether a Python value is JSON that round-trips exactly and hashes as JavaScript would.

Accepted: dict (str keys), list, str, int, float, bool, None, by exact type. Everything JSON would drop,
coerce or reshape (NaN, tuples, sets, bytes, datetimes, subclasses, cycles, lone surrogates, ints
JavaScript would read as another number) is rejected with `NonSerializableAgentEventError` naming the path. Never mutates,
never copies, never does I/O.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from enum import Enum
from typing import Any, Final, NoReturn

from agent_explorer.errors import NonSerializableAgentEventError

__all__ = [
    "MAX_SAFE_INTEGER",
    "NEEDS_NUMBER_FORMATTING",
    "NEEDS_UTF16_KEY_ORDER",
    "PLAIN_DECIMAL_FLOOR",
    "assert_json_serializable",
    "format_number",
    "json_flags",
]

#: Largest integer every IEEE-754 double holds exactly, as JavaScript's Number.MAX_SAFE_INTEGER.
MAX_SAFE_INTEGER: Final = 2**53 - 1

# Flags json_flags reports so the hasher knows whether orjson's output is already JCS text.
#: A float (or an int beyond 2**53) that orjson would print differently from ECMAScript.
NEEDS_NUMBER_FORMATTING: Final = 1
#: A key holding an astral-plane character: UTF-16 code-unit order may differ from code-point order.
NEEDS_UTF16_KEY_ORDER: Final = 2

_INF: Final = math.inf
# orjson prints non-integral doubles of magnitude in [1e-5, 2**53) exactly as ECMAScript's
# Number::toString does (shortest round-trip digits, plain decimal form); outside that band one of
# them switches to exponent form or prints a trailing ".0". tests/eventlog/test_hashing.py pins it.
#: Below this magnitude (and for integral values) orjson's number text differs from ECMAScript's.
PLAIN_DECIMAL_FLOOR: Final = 1e-5


class _Reject(Exception):
    """Internal signal of the fast scan: something is wrong; the careful pass finds and names it."""


def assert_json_serializable(value: object, path: str = "") -> None:
    """Raise NonSerializableAgentEventError unless `value` is strict JSON.

    `path` names the value itself (e.g. "event"); the error's `.path` extends it to the offending
    place (`event.items[3].when`, `context["weird key"]`). Runs on every entry creation and append,
    so the common case is one tight recursive pass with no path bookkeeping.
    """
    json_flags(value, path)


def json_flags(value: object, path: str = "") -> int:
    """Validate `value` as strict JSON and return the NEEDS_* flags the canonicaliser cares about."""
    try:
        return _scan(value)
    except (_Reject, RecursionError):
        # Something is wrong (or the nesting is deeper than the interpreter stack): walk again
        # iteratively, tracking paths and ancestors, to name the place or accept deep values.
        return _careful_scan(value, path)


# ---------------------------------------------------------------------------------------------
# Fast pass: exact-type dispatch, no paths, no cycle bookkeeping (a cycle ends in RecursionError).


def _scan(value: object) -> int:
    t = type(value)
    if t is dict:
        return _scan_dict(value)  # type: ignore[arg-type]
    if t is list:
        return _scan_list(value)  # type: ignore[arg-type]
    return _scan_list([value])  # a scalar at the top level (rare): the list scan's dispatch decides


# _scan_dict and _scan_list repeat one value dispatch on purpose: sharing it (keys checked, then
# _scan_list(d.values())) made this check, run on every append, ~9% slower (benchmarks/hashing.py).
def _scan_dict(d: dict[Any, Any]) -> int:
    flags = 0
    for k, v in d.items():
        if type(k) is not str:
            raise _Reject
        if not k.isascii():
            flags |= _key_flags(k)
        t = type(v)
        if t is str:
            if not v.isascii():
                _reject_surrogates(v)
        elif t is dict:
            flags |= _scan_dict(v)
        elif t is list:
            flags |= _scan_list(v)
        elif t is int:
            if not -MAX_SAFE_INTEGER <= v <= MAX_SAFE_INTEGER:
                flags |= _big_int_flags(v)
        elif v is None or t is bool:
            pass
        elif t is float:
            flags |= _float_flags(v)
        else:
            raise _Reject
    return flags


def _scan_list(items: list[Any]) -> int:
    flags = 0
    for v in items:
        t = type(v)
        if t is str:
            if not v.isascii():
                _reject_surrogates(v)
        elif t is dict:
            flags |= _scan_dict(v)
        elif t is list:
            flags |= _scan_list(v)
        elif t is int:
            if not -MAX_SAFE_INTEGER <= v <= MAX_SAFE_INTEGER:
                flags |= _big_int_flags(v)
        elif v is None or t is bool:
            pass
        elif t is float:
            flags |= _float_flags(v)
        else:
            raise _Reject
    return flags


def _reject_surrogates(s: str) -> None:
    # Python strs hold code points; any surrogate code point in one is unpaired by construction
    # (a JSON "\ud83d\ude00" parses to one astral code point), and no UTF-8 text can carry it.
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        raise _Reject from None


def _key_flags(key: str) -> int:
    _reject_surrogates(key)
    return NEEDS_UTF16_KEY_ORDER if max(key) > "\uffff" else 0


def _big_int_flags(n: int) -> int:
    # Beyond 2**53 an int is JSON only if JavaScript reads its text as a double that hashes to the
    # same text: either a double holds it exactly (10**20), or it is exactly how JavaScript writes
    # a double (JSON.stringify(2**60) == "1152921504606847000", which Python reads back as an int).
    try:
        as_double = float(n)
    except OverflowError:
        raise _Reject from None
    if as_double == n:
        return NEEDS_NUMBER_FORMATTING
    if str(n) == format_number(as_double):
        return NEEDS_NUMBER_FORMATTING
    raise _Reject


def _float_flags(x: float) -> int:
    if not -_INF < x < _INF:  # false for NaN too
        raise _Reject
    if x.is_integer() or -PLAIN_DECIMAL_FLOOR < x < PLAIN_DECIMAL_FLOOR:
        return NEEDS_NUMBER_FORMATTING
    return 0


def format_number(x: float) -> str:
    """ECMAScript Number::toString(x) for a finite double (JCS section 3.2.2.3).

    Python's repr gives the same shortest round-trip digits (ties to the closest value); only the
    layout differs: ECMAScript prints integers up to 1e21 in full, uses exponents below 1e-6, writes
    "e+" and never "-0".
    """
    if x == 0:
        return "0"
    text = repr(x)
    sign = ""
    if text[0] == "-":
        sign, text = "-", text[1:]
    mantissa, _, exponent = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + (int(exponent) if exponent else 0)  # value = 0.<digits> * 10**point
    significant = digits.lstrip("0")
    point -= len(digits) - len(significant)
    significant = significant.rstrip("0")
    k = len(significant)
    if k <= point <= 21:
        body = significant + "0" * (point - k)
    elif 0 < point <= 21:
        body = f"{significant[:point]}.{significant[point:]}"
    elif -6 < point <= 0:
        body = "0." + "0" * -point + significant
    else:
        e = point - 1
        head = significant[0] if k == 1 else f"{significant[0]}.{significant[1:]}"
        body = f"{head}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + body


# ---------------------------------------------------------------------------------------------
# Careful pass: iterative (any depth), paths and ancestors tracked; names the first problem in
# document order.

_EXIT: Final = object()


def _careful_scan(root: object, root_path: str) -> int:
    flags = 0
    ancestors: set[int] = set()
    stack: list[tuple[object, Any]] = [(root, root_path)]
    while stack:
        value, path = stack.pop()
        if value is _EXIT:
            ancestors.discard(path)
            continue
        t = type(value)
        if t is dict or t is list:
            ident = id(value)
            if ident in ancestors:
                _fail(path, f"a cycle: this {t.__name__} contains itself; JSON is a tree")
            ancestors.add(ident)
            stack.append((_EXIT, ident))
            children: list[tuple[object, str]] = []
            if t is dict:
                for k, v in value.items():  # type: ignore[attr-defined]
                    if type(k) is not str:
                        _fail(
                            f"{path}[{k!r}]",
                            f"a dict key of type {_type_name(k)} ({k!r}); JSON object keys are "
                            "str. Convert the key with str() or restructure the mapping",
                        )
                    child_path = _key_path(path, k)
                    if not k.isascii():
                        flags |= _careful_string(k, child_path, "key")
                        if max(k) > "\uffff":
                            flags |= NEEDS_UTF16_KEY_ORDER
                    children.append((v, child_path))
            else:
                items: list[Any] = value  # type: ignore[assignment]
                children = [(v, f"{path}[{i}]") for i, v in enumerate(items)]
            stack.extend(reversed(children))
        else:
            flags |= _careful_scalar(value, path)
    return flags


def _careful_scalar(value: object, path: str) -> int:
    t = type(value)
    if value is None or t is bool:
        return 0
    if t is str:
        return _careful_string(value, path, "string")  # type: ignore[arg-type]
    if t is int:
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:  # type: ignore[operator]
            return 0
        try:
            return _big_int_flags(value)  # type: ignore[arg-type]
        except _Reject:
            _fail(
                path,
                f"the int {_int_text(value)} cannot be held exactly by an IEEE-754 double (beyond "
                "±(2**53-1) only ints equal to a double, or written as JavaScript writes that "
                "double, are JSON numbers); JavaScript would read a different number. Store it "
                "as a string",
            )
    if t is float:
        if math.isnan(value):  # type: ignore[arg-type]
            _fail(path, "NaN is not a JSON number (JSON.stringify writes null). Use None")
        if math.isinf(value):  # type: ignore[arg-type]
            _fail(path, f"{value} is not a JSON number (JSON.stringify writes null). Use None")
        return _float_flags(value)  # type: ignore[arg-type]
    _fail(path, _describe_unsupported(value))


def _careful_string(s: str, path: str, what: str) -> int:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as error:
        _fail(
            path,
            f"the {what} holds a lone surrogate U+{ord(s[error.start]):04X} at position "
            f"{error.start}; no JSON text can carry it. Drop it or repair the text "
            "(e.g. s.encode('utf-16', 'surrogatepass').decode('utf-16'))",
        )
    return 0


def _describe_unsupported(value: object) -> str:
    name = _type_name(value)
    if isinstance(value, bool | int | float | str | dict | list):
        base = next(b for b in (bool, int, float, str, dict, list) if isinstance(value, b))
        hint = f"convert it to a plain {base.__name__}"
        if isinstance(value, Enum):
            hint = "store its .value"
        return f"a {name}, a subclass of {base.__name__}, not a plain {base.__name__}; {hint}"
    if isinstance(value, tuple):
        return f"a {name}; it would read back as a list, so the round trip is not exact. Use a list"
    if isinstance(value, set | frozenset):
        return f"a {name}; JSON has no sets. Use a sorted list"
    if isinstance(value, bytes | bytearray | memoryview):
        return f"{name}; JSON has no bytes. Decode it or encode it as base64 text"
    if isinstance(value, datetime | date | time):
        return f"a {name}; JSON has no dates. Store an ISO-8601 string (value.isoformat())"
    if isinstance(value, timedelta):
        return f"a {name}; store a number of seconds or milliseconds"
    if isinstance(value, Decimal):
        return f"a {name}; use a str (exact) or a float"
    if isinstance(value, Callable):  # type: ignore[arg-type]
        return f"a callable ({name}); functions cannot be journaled. Store a name or an id"
    return f"a {name} object; only dict, list, str, int, float, bool and None are JSON"


def _int_text(n: Any) -> str:
    # str() of a huge int is slow and refused past 4300 digits; the size says enough.
    return str(n) if n.bit_length() < 256 else f"of {n.bit_length()} bits"


def _type_name(value: object) -> str:
    t = type(value)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _key_path(path: str, key: str) -> str:
    if key.isidentifier():
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def _fail(path: str, problem: str) -> NoReturn:
    where = path or "the top level"
    raise NonSerializableAgentEventError(f"Not strict JSON at {where}: {problem}.", path=path)
