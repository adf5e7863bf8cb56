"""Cumulative usage totals at any index of a log: `get_usage_from_events` over the prefix, checkpointed.

The log package's `get_usage_from_events` is the one definition of the totals (token keys always present,
nested counters summed, a missing `totalTokens` derived); this index only makes it cheap per frame: it keeps
its result every K usage records and folds at most K more on a lookup. Read-only over the entries.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from typing import Any

from .api import api

__all__ = ["USAGE_TYPE", "UsageIndex"]

USAGE_TYPE = "@agent.usage"
CHECKPOINT_EVERY = (
    256  # usage records between stored totals: a lookup folds at most this many
)


def _combine(into: dict[str, Any], more: Mapping[str, Any]) -> dict[str, Any]:
    """Add two fold results key by key (numbers add, objects recurse): fold(a + b) == combine(fold(a), fold(b))."""
    out = dict(into)
    for key, value in more.items():
        current = out.get(key)
        if isinstance(value, Mapping):
            out[key] = _combine(current if isinstance(current, dict) else {}, value)
        elif isinstance(current, (int, float)) and not isinstance(current, bool):
            out[key] = current + value
        elif key not in out:
            out[key] = value
    return out


class UsageIndex:
    """Totals at any index (`totals_at`) and a down-sampled cumulative series for the small plot."""

    def __init__(
        self, entries: Sequence[Mapping[str, Any]], *, every: int = CHECKPOINT_EVERY
    ) -> None:
        self.entries = entries
        self.every = every
        self.positions: list[int] = []
        for i, entry in enumerate(entries):
            # Fast path for the common shape (plain dicts); anything odd is checked the slow way.
            try:
                if entry["event"]["type"] == USAGE_TYPE:
                    self.positions.append(i)
            except (KeyError, TypeError):
                event = entry.get("event") if isinstance(entry, Mapping) else None
                if isinstance(event, Mapping) and event.get("type") == USAGE_TYPE:
                    self.positions.append(i)
        self._fold = api("get_usage_from_events") if self.positions else None
        # checkpoints[j] = totals of the first j * every usage records
        self._checkpoints: list[dict[str, Any]] = [{}]
        for start in range(0, len(self.positions) - every + 1, every):
            chunk = self._records(start, start + every)
            self._checkpoints.append(_combine(self._checkpoints[-1], self._fold(chunk)))  # type: ignore[misc]

    def _records(self, start: int, stop: int) -> list[Mapping[str, Any]]:
        return [self.entries[p] for p in self.positions[start:stop]]

    def count_at(self, index: int) -> int:
        """How many usage records are in entries [0, index]."""
        return bisect.bisect_right(self.positions, index)

    def totals_at(self, index: int) -> dict[str, Any]:
        """`get_usage_from_events(entries[: index + 1])`, or {} before the first usage record."""
        count = self.count_at(index)
        if count == 0 or self._fold is None:
            return {}
        j = min(count // self.every, len(self._checkpoints) - 1)
        rest = self._fold(self._records(j * self.every, count))
        return _combine(self._checkpoints[j], rest)

    def series(
        self, max_points: int = 240, key: str = "totalTokens"
    ) -> list[list[float | int]]:
        """`[[index, cumulative value], ...]` at up to `max_points` usage records, ending at the last one."""
        n = len(self.positions)
        if n == 0:
            return []
        step = max(1, -(-n // max_points))
        picks = list(range(step - 1, n, step))
        if picks[-1] != n - 1:
            picks.append(n - 1)
        out: list[list[float | int]] = []
        for k in picks:
            value = self.totals_at(self.positions[k]).get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                out.append([self.positions[k], value])
        return out
