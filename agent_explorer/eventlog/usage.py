"""Usage totals: fold the log's @agent.usage records into cumulative spend, overall and per model.

The log is the source of truth, so totals are a projection of it, never a host-side accumulator.
Pure; reads entries (or bare events) once, in order, and never mutates them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agent_explorer.eventlog.entries import USAGE_EVENT_TYPE

__all__ = ["TOKEN_KEYS", "get_usage_from_events"]

#: Always present in a total, even when zero, so callers can read them without .get().
TOKEN_KEYS = ("inputTokens", "outputTokens", "totalTokens")


def get_usage_from_events(entries: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Cumulative totals of every `@agent.usage` record in `entries`.

    Returns `{"inputTokens", "outputTokens", "totalTokens", ...every other numeric usage field,
    "byModel": {model: {same keys}}}`. Nested numeric objects (e.g. `inputTokenDetails`) are
    summed key by key; non-numeric fields are ignored. A record without `totalTokens` counts
    input + output, as the AI SDK defines the total. Accepts log entries or bare events, and any
    iterable (a streaming `iter_log` works without holding the log).
    """
    totals: dict[str, Any] = _zero()
    by_model: dict[str, dict[str, Any]] = {}
    for item in entries:
        event = item.get("event") if isinstance(item, Mapping) and "event" in item else item
        if not isinstance(event, Mapping) or event.get("type") != USAGE_EVENT_TYPE:
            continue
        usage = event.get("usage")
        if not isinstance(usage, Mapping):
            continue
        record = _numbers(usage)
        record.pop("byModel", None)  # the one key the totals reserve for themselves
        if "totalTokens" not in record and ("inputTokens" in record or "outputTokens" in record):
            record["totalTokens"] = record.get("inputTokens", 0) + record.get("outputTokens", 0)
        _add(totals, record)
        model = event.get("model")
        if isinstance(model, str) and model:
            _add(by_model.setdefault(model, _zero()), record)
    totals["byModel"] = by_model
    return totals


def _zero() -> dict[str, Any]:
    return dict.fromkeys(TOKEN_KEYS, 0)


def _numbers(usage: Mapping[str, Any]) -> dict[str, Any]:
    """The numeric leaves of a usage object, keeping their nesting (bools are not counts)."""
    found: dict[str, Any] = {}
    for key, value in usage.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float):
            found[key] = value
        elif isinstance(value, Mapping):
            nested = _numbers(value)
            if nested:
                found[key] = nested
    return found


def _add(into: dict[str, Any], record: Mapping[str, Any]) -> None:
    for key, value in record.items():
        if isinstance(value, Mapping):
            current = into.get(key)
            if not isinstance(current, dict):
                current = into[key] = {}
            _add(current, value)
        elif isinstance(into.get(key), int | float):
            into[key] += value
        elif key not in into:
            into[key] = value
        # else: the same key is a number here and an object elsewhere; the object wins, the
        # stray number is dropped rather than corrupting the nested totals.
