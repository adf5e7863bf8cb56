"""StateHasher: `state_hash` for a fold's run of snapshots, at a cost close to orjson's alone.

Why: a verifying fold hashes every step's persisted snapshot, and consecutive snapshots share almost
all of their objects (the engine copies a context on assign, not its values). The plain `state_hash`
re-validates the whole snapshot in Python every step; that scan cost two to three folds.

How (benchmarks/README.md, "verification at the speed of the fold", has the figures):
- The text is never cached: every call serializes the live value with orjson (C), in a strict mode
  that refuses what is not JSON (non-str keys, lone surrogates, ints beyond 2**53, subclasses of
  str/int/float/dict/list, sets, bytes, dates, cycles...) instead of coercing it. A value mutated
  in place is therefore always hashed as it is now.
- The text's JCS correctness is checked on the text itself (C-speed byte scans): orjson's output
  is RFC 8785 except for integral/tiny/huge floats (always printed with ".0" or an exponent) and for
  keys beyond the BMP (4-byte UTF-8); either sends the value down the exact path (`state_hash`).
- What orjson would coerce silently (tuples, enums, UUIDs, orjson.Fragment, NaN and infinities) is
  looked for by a Python walk that descends only into the dicts and lists that were not under the
  previous value hashed (remembered by identity for one call, with a strong reference so that no
  other object can take the id). An unchanged subtree is skipped; a changed one costs what changed.

The one trust the memo takes: a dict or list under the previous value, edited *in place* since to hold
one of those coerced values (a tuple, an enum, a UUID, a Fragment, NaN or an infinity) is hashed as
orjson renders it (as JavaScript's JSON.stringify would) instead of being refused. Every other
in-place edit (any JSON value, or anything orjson refuses) is seen, because the text is fresh.
The exact path still decides every value the fast path declines, so errors name the same path.
"""

from __future__ import annotations

import re
from hashlib import sha256
from itertools import compress
from operator import not_
from typing import Any, Final, NoReturn

import orjson

from .jcs import state_hash

__all__ = ["StateHasher"]

_STRICT: Final = (
    orjson.OPT_SORT_KEYS
    | orjson.OPT_STRICT_INTEGER
    | orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
)
# orjson writes an integral double as "50.0" and a tiny or huge one with "e-"/"e+"; ECMAScript's text
# differs from orjson's only there (tests/eventlog/test_incremental_hash.py pins it). A match inside a
# string only costs the exact path.
_NUMBER_TEXT: Final = re.compile(rb"\.0(?![0-9])|[0-9]e[-+]")
# A 4-byte UTF-8 sequence: a character beyond the BMP, whose key order UTF-16 may change.
_ASTRAL: Final = re.compile(rb"[\xf0-\xf4]")
_INF: Final = float("inf")
_LEAF_TYPES: Final = frozenset({str, int, bool, type(None)})
_CONTAINER_TYPES: Final = frozenset({dict, list})
_PLAIN_TYPES: Final = _LEAF_TYPES | _CONTAINER_TYPES | {float}
_WIDE: Final = 8  # from this many items on, a container is checked in C (cheaper per item, dearer to start)

def _may_hold_float_text(text: bytes) -> bool:
    # One-byte searches are memchr-fast; the two-byte ones (and the regex) run only behind them.
    return (
        (b"." in text and b".0" in text)
        or (b"+" in text and b"e+" in text)
        or (b"-" in text and b"e-" in text)
    )


def _refuse(value: object) -> NoReturn:
    raise TypeError  # orjson reports it as JSONEncodeError: the exact path names the problem


class StateHasher:
    """`hasher(persisted)` equals `state_hash(persisted)` (same hex digest, same errors), faster when
    successive values share subtrees. One per fold; not thread-safe; never mutates what it hashes."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        # id -> the dict or list itself, for every container under the last value hashed whose whole
        # subtree was checked; holding it keeps its id from being reused by another object.
        self._seen: dict[int, object] = {}

    def __call__(self, value: object) -> str:
        try:
            text = orjson.dumps(value, option=_STRICT, default=_refuse)
        except (orjson.JSONEncodeError, RecursionError):
            return state_hash(value)  # refused (or nested too deep): the exact path raises or copes
        if _may_hold_float_text(text) and _NUMBER_TEXT.search(text) is not None:
            return state_hash(value)
        if not text.isascii() and _ASTRAL.search(text) is not None:
            return state_hash(value)
        if (type(value) is dict or type(value) is list) and self._checked(value):
            return sha256(text).hexdigest()
        return state_hash(value)  # a coerced value below, or not a container at all (rare): exact path

    def forget(self) -> None:
        """Drop every remembered container (the next call checks the whole value again)."""
        self._seen.clear()

    def _checked(self, root: dict[str, Any] | list[Any]) -> bool:
        """True when no dict or list under `root` that was not under the previous value holds a value
        orjson would coerce. Then remembers the containers met on the way (those of this value that
        the next one may share), so memory stays one snapshot's worth and nothing outlives it long."""
        seen = self._seen
        met: dict[int, object] = {}
        stack: list[Any] = [root]
        while stack:
            container = stack.pop()
            values = container.values() if type(container) is dict else container
            if len(values) > _WIDE:
                # A wide container in whole-container steps in C (a type set, an identity filter).
                kinds = set(map(type, values))
                if kinds <= _LEAF_TYPES:
                    continue
                if not kinds <= _PLAIN_TYPES:
                    return False  # a tuple, enum, UUID, Fragment...: the exact path decides
                if float in kinds and not all(-_INF < item < _INF for item in values if type(item) is float):
                    return False  # NaN or an infinity
                if kinds & _CONTAINER_TYPES:
                    if not kinds <= _CONTAINER_TYPES:
                        values = [item for item in values if type(item) is dict or type(item) is list]
                    ids = list(map(id, values))
                    stack.extend(compress(values, map(not_, map(seen.__contains__, ids))))
                    met.update(zip(ids, values, strict=True))
                continue
            for item in values:
                kind = type(item)
                if kind is str or kind is int or item is None or kind is bool:
                    continue
                if kind is dict or kind is list:
                    key = id(item)
                    if key not in seen:
                        stack.append(item)
                    met[key] = item  # a strong reference: no other object gets this id while remembered
                    continue
                if kind is float and -_INF < item < _INF:
                    continue
                return False  # a tuple, enum, UUID, Fragment, NaN, infinity: the exact path decides
        self._seen = met
        return True
