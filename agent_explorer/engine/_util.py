"""Small shared helpers of the engine: JS-compatible key order, the `undefined` marker, callable naming.

Pure; no I/O, no imports from the rest of agent_explorer except errors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["UNDEFINED", "callable_name", "describe_value", "is_array_index", "js_keys", "to_list"]


class _Undefined:
    """JavaScript's `undefined`: a value that is absent from JSON, unlike None (JSON null)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNDEFINED"

    def __bool__(self) -> bool:
        return False


UNDEFINED: Any = _Undefined()


def is_array_index(key: Any) -> bool:
    """True for keys JavaScript objects order first (canonical integers 0 .. 2**32-2)."""
    if isinstance(key, bool):
        return False
    if isinstance(key, int):
        return 0 <= key < 2**32 - 1
    if isinstance(key, str) and key.isdigit() and key.isascii():
        return (key == "0" or key[0] != "0") and int(key) < 2**32 - 1
    return False


def js_keys(mapping: dict[Any, Any]) -> list[Any]:
    """Keys in the order `Object.keys` would give for the same object literal.

    XState walks config objects with Object.keys, which lists integer-like keys first in ascending
    order; document order and `after` timer order follow from that, so we must too.
    """
    keys = list(mapping.keys())
    if not any(is_array_index(k) for k in keys):
        return keys
    ints = sorted((k for k in keys if is_array_index(k)), key=lambda k: int(k))
    return ints + [k for k in keys if not is_array_index(k)]


def callable_name(fn: Callable[..., Any]) -> str:
    """A stable name for an inline callable: its qualified name, as `inline:<qualname>`."""
    qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if qualname is None:
        qualname = type(fn).__qualname__
    return f"inline:{qualname}"


def to_list(value: Any) -> list[Any]:
    """XState's toArray: undefined -> [], a list stays, anything else becomes [value]."""
    if value is None or value is UNDEFINED:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def describe_value(value: Any) -> Any:
    """A JSON-safe description of a static value or expression for `machine.definition`."""
    if callable(value) and not isinstance(value, type):
        describe = getattr(value, "describe", None)
        if describe is not None:
            try:
                return describe()
            except TypeError:
                pass
        return callable_name(value)
    if isinstance(value, dict):
        return {str(k): describe_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [describe_value(v) for v in value]
    if value is UNDEFINED:
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    describe = getattr(value, "describe", None)
    if describe is not None:
        return describe()
    return repr(value)

