"""RFC 8785 (JCS) canonical JSON + SHA-256 for the machine's structural version.

The engine sits below the log layer and may not import it, so it carries this small, exact
implementation for what definitions contain (dicts, lists, strings, ints, bools, None, finite
floats): keys sorted by UTF-16 code units, numbers in ECMAScript Number::toString form. Its
result equals `agent_explorer.log.hashing.state_hash` (a test pins that). Pure.
"""

from __future__ import annotations

import hashlib
import json
import math
from decimal import Decimal
from typing import Any

__all__ = ["canonical_json", "canonical_sha256"]


def _number(value: float) -> str:
    """ECMAScript Number::toString: shortest round-trip digits, exponent only outside 1e-6..1e21."""
    if not math.isfinite(value):
        raise ValueError(f"{value!r} is not JSON")
    if value == 0:
        return "0"
    if value < 0:
        return "-" + _number(-value)
    _, digit_tuple, exponent = Decimal(repr(value)).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    k = len(digits)
    n = exponent + len(digit_tuple)  # value = 0.<digits> x 10**n
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


def canonical_json(value: Any) -> str:
    if value is None or value is True or value is False:
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical_json(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: str(k).encode("utf-16-be"))
        return "{" + ",".join(json.dumps(str(k), ensure_ascii=False) + ":" + canonical_json(value[k]) for k in keys) + "}"
    raise TypeError(f"{type(value).__name__} is not JSON")


def canonical_sha256(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()
