"""check_state_hash: the state hash a verifying fold compares with a recorded one, at orjson's speed.

Why: a verifying fold hashes every step's persisted snapshot. The plain `state_hash` first proves the
whole snapshot strict JSON with a Python scan, which cost two to three folds; orjson alone (C) is a
fifth of that. Verification needs the strict verdict only when it has something to say.

How (benchmarks/README.md, "verification at the speed of the fold", has the figures and what else was
tried, including identity memos per subtree):
- The text is never cached: every call serializes the live value with orjson in a strict mode that
  refuses what is not JSON (non-str keys, lone surrogates, ints beyond 2**53, subclasses of
  str/int/float/dict/list, sets, bytes, dates, cycles...) instead of coercing it. A value mutated in
  place between steps is therefore always hashed as it is now; nothing is trusted from a cache.
- The text's JCS correctness is checked on the text itself, with memchr-fast byte searches: orjson's
  output is RFC 8785 except for integral, tiny and huge doubles (always printed with ".0", "e-" or
  "e+") and for keys beyond the BMP (4-byte UTF-8); either sends the value down the exact path.
- What orjson would still coerce (a tuple as an array, an enum as its value, a UUID as its text, an
  orjson.Fragment as its bytes, NaN and infinities as null) is ruled out by the exact path only when
  the digest differs from the recorded one. When it equals the recorded digest, the live value's
  JSON rendering is the recorded canonical text itself, byte for byte; so a log verifies even if the
  fold now holds, say, a tuple where the recorder held a list (as XState would, whose JSON has no
  tuples). The recorder still refuses such values (`create_replay_entry` hashes with `state_hash`).

So: a returned digest equal to `expected` certifies the live value renders exactly as recorded; any
other returned digest is `state_hash(value)` exactly, and a value that is not strict JSON raises
`NonSerializableAgentEventError` naming the same path as `state_hash` would.
"""

from __future__ import annotations

import re
from hashlib import sha256
from typing import Final, NoReturn

import orjson

from .jcs import state_hash

__all__ = ["certifies", "check_state_hash", "is_jcs_text", "strict_text"]

_STRICT: Final = (
    orjson.OPT_SORT_KEYS
    | orjson.OPT_STRICT_INTEGER
    | orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
)
# orjson writes an integral double as "50.0" and a tiny or huge one with "e-"/"e+"; ECMAScript's text
# differs from orjson's only there (tests/eventlog/test_verify_hash.py pins it). A match inside a
# string only costs the exact path.
_INTEGRAL_DOUBLE: Final = re.compile(rb"\.0(?![0-9])")  # a literal prefix: sre scans for ".0" at memchr speed
_DIGITS: Final = frozenset(b"0123456789")
# A 4-byte UTF-8 sequence starts with 0xF0-0xF4 (a character beyond the BMP, whose key order UTF-16 may change);
# deleting every byte below 0xF0 leaves those (valid UTF-8 has no 0xF5-0xFF).
_BELOW_ASTRAL: Final = bytes(range(0xF0))


def check_state_hash(value: object, expected: str | None) -> str:
    """`state_hash(value)` for comparing with the recorded `expected` (see the module docstring).

    Equal to `state_hash(value)` for every strict-JSON value; for a value holding something orjson
    coerces, it returns `expected` only when the coerced rendering hashes to it, else raises as
    `state_hash` does.
    """
    if type(value) is dict:
        text = strict_text(value)
        if text is not None and certifies(text, expected):
            return expected  # type: ignore[return-value]  # certifies is never true of None
    return state_hash(value)  # a divergence (or no record, or refused): exact, and strict about what it hashes


def strict_text(value: object) -> bytes | None:
    """orjson's text of `value` in the strict mode above (sorted keys), or None where orjson refuses it (or
    it nests too deep): `state_hash` then raises or copes. Not yet known to be JCS text: see `certifies`."""
    try:
        return orjson.dumps(value, option=_STRICT, default=_refuse)
    except (orjson.JSONEncodeError, RecursionError):
        return None


def certifies(text: bytes, expected: object) -> bool:
    """Whether `text` (from `strict_text(value)`) proves `state_hash(value) == expected`: its SHA-256 is
    `expected` and it is JCS text (none of orjson's own number forms, no key beyond the BMP). False says
    nothing: `state_hash` decides."""
    return sha256(text).hexdigest() == expected and is_jcs_text(text)


def is_jcs_text(text: bytes) -> bool:
    """Whether orjson's strict text is also JCS's: none of orjson's own number forms, no key beyond the BMP
    (a match inside a string only costs the exact path)."""
    # Every search is a C scan, and the one-byte ones (memchr: ~0.05 ns a byte) go first: a two-byte search
    # runs ~1 ns a byte here. Python runs only per "e+"/"e-" found. (One regex with both number forms,
    # `\.0(?![0-9])|[0-9]e[-+]`, has no literal prefix: sre tried it at every byte, 27 ns a byte, which was a
    # third of verifying a 12-entry thread.)
    if b"." in text and b".0" in text and _INTEGRAL_DOUBLE.search(text) is not None:
        return False
    for sign, exponent in ((b"+", b"e+"), (b"-", b"e-")):
        at = text.find(exponent) if sign in text else -1
        while at != -1:
            if at and text[at - 1] in _DIGITS:
                return False
            at = text.find(exponent, at + 2)
    return text.isascii() or not text.translate(None, _BELOW_ASTRAL)


def _refuse(value: object) -> NoReturn:
    """orjson's `default` in `strict_text`: whatever orjson does not write itself is refused, not converted."""
    raise TypeError  # orjson reports it as JSONEncodeError: the exact path names the problem
