"""The windowed event table: one page of rows at a time, filtered by event type and text.

The browser never holds the whole log: it asks for `page(offset, limit, ...)` and gets at most `limit` small
rows. Filters are computed once per (type, text) and cached as index lists. Read-only over the entries. Not
thread-safe (the caches grow as it is read): the explorer's session reads it under its one lock.
"""

from __future__ import annotations

import bisect
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from ..eventlog.entries import USAGE_EVENT_TYPE
from .protocol import TablePage, TableRow

__all__ = ["MAX_PAGE", "EventTable", "entry_text", "page_offset"]

MAX_PAGE = 500
SUMMARY_CAP = 140
_CACHE_SIZE = 8


def _event_of(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    event = entry.get("event") if isinstance(entry, Mapping) else None
    return event if isinstance(event, Mapping) else {}


def _type_of(entry: Mapping[str, Any]) -> str:
    try:
        kind = entry["event"]["type"]
    except (KeyError, TypeError):
        kind = _event_of(entry).get("type")
    return kind if type(kind) is str else str(kind)


def _summary(event: Mapping[str, Any]) -> str:
    """The payload without its type, one line, capped: enough to tell rows apart at a glance."""
    rest = {k: v for k, v in event.items() if k != "type"}
    if not rest:
        return ""
    text = _json_text(rest)[0]
    return text if len(text) <= SUMMARY_CAP else text[: SUMMARY_CAP - 1] + "…"


def _json_text(value: Any) -> tuple[str, bool]:
    """Compact JSON of `value`, and whether orjson wrote it (it cannot for a non-str key or an int past 64 bits;
    then the stdlib does)."""
    try:
        return orjson.dumps(value, default=str).decode(), True
    except (orjson.JSONEncodeError, UnicodeError):
        return json.dumps(value, default=str, ensure_ascii=False, separators=(",", ":")), False


def page_offset(offset: int, limit: int, total: int) -> int:
    """Where the page holding row `offset` starts: pages start at multiples of `limit`, except the last,
    which ends at the last row (so it holds a full page, never a lone row after a page boundary)."""
    aligned = (max(0, int(offset)) // limit) * limit
    return max(0, min(aligned, total - limit))


def entry_text(entry: Mapping[str, Any]) -> tuple[str, bool]:
    """What a text filter looks in (lowercased): the entry's id, causation id and event as JSON; and whether orjson
    wrote it (else, for a non-str key or an int past 64 bits, the stdlib did)."""
    return _json_text([entry.get("id"), entry.get("causationId"), entry.get("event")])


class EventTable:
    """Pages of rows over a list of entries that may grow (branches append); filters are cached by query."""

    def __init__(self, entries: Sequence[Mapping[str, Any]]) -> None:
        self.entries = entries
        self.divergent: frozenset[int] = frozenset()
        self._cache: dict[tuple[str, str], tuple[int, list[int]]] = {}
        self._types: Counter[str] = Counter()
        self._typed_upto = 0

    def types(self) -> list[list[Any]]:
        """`[[type, count], ...]` most frequent first, for the type filter's menu."""
        self._count_types()
        return [[t, c] for t, c in self._types.most_common()]

    def _count_types(self) -> None:
        self._types.update(map(_type_of, self.entries[self._typed_upto :]))
        self._typed_upto = len(self.entries)

    def matches(
        self, type_filter: str | None = None, text: str | None = None
    ) -> list[int] | None:
        """Indices passing the filters, or None when no filter is set (then every index passes)."""
        type_filter = type_filter or ""
        needle = (text or "").strip().lower()
        if not type_filter and not needle:
            return None
        return self._matches(type_filter, needle)

    def _matches(self, type_filter: str, needle: str) -> list[int]:
        key = (type_filter, needle)
        cached = self._cache.get(key)
        if cached is None:
            cached = self._narrowed(type_filter, needle)
        start, hits = cached if cached else (0, [])
        # Entries only ever grow at the end, so a cached result is extended, never recomputed.
        for i in range(start, len(self.entries)):
            if self._passes(self.entries[i], type_filter, needle):
                hits.append(i)
        if key not in self._cache and len(self._cache) >= _CACHE_SIZE:
            self._cache.pop(next(iter(self._cache)))
        self._cache[key] = (len(self.entries), hits)
        return hits

    def _passes(self, entry: Mapping[str, Any], type_filter: str, needle: str) -> bool:
        if type_filter and _type_of(entry) != type_filter:
            return False
        return not needle or needle in self._haystack(entry)

    def _narrowed(self, type_filter: str, needle: str) -> tuple[int, list[int]] | None:
        """Typing extends a search ("ref" -> "refu"): scan the hits of a cached broader query, not the log."""
        best: tuple[int, list[int]] | None = None
        for (cached_type, cached_needle), (upto, hits) in self._cache.items():
            if cached_type not in ("", type_filter) or cached_needle not in needle:
                continue
            if best is None or len(hits) < len(best[1]):
                best = (upto, hits)
        if best is None:
            return None
        upto, broader = best
        entries = self.entries
        return upto, [
            i for i in broader if self._passes(entries[i], type_filter, needle)
        ]

    @staticmethod
    def _haystack(entry: Mapping[str, Any]) -> str:
        return entry_text(entry)[0].lower()

    def position_of(
        self, index: int, type_filter: str | None = None, text: str | None = None
    ) -> int | None:
        """Row position of log index `index` under the filters (None when the filters hide it)."""
        hits = self.matches(type_filter, text)
        if hits is None:
            return index if 0 <= index < len(self.entries) else None
        pos = bisect.bisect_left(hits, index)
        return pos if pos < len(hits) and hits[pos] == index else None

    def anchor(self, index: int, type_filter: str | None = None, text: str | None = None) -> int:
        """The row to show for cursor `index` under the filters: its own row, or when the filters hide it the
        first match after it (the last match when none follows; 0 when nothing matches)."""
        hits = self.matches(type_filter, text)
        if hits is None:
            return max(0, min(index, len(self.entries) - 1))
        return max(0, min(bisect.bisect_left(hits, index), len(hits) - 1))

    def row(self, index: int) -> TableRow:
        entry = self.entries[index]
        event = _event_of(entry)
        usage = event.get("usage") if event.get("type") == USAGE_EVENT_TYPE else None
        total = usage.get("totalTokens") if isinstance(usage, Mapping) else None
        return {
            "index": index,
            "id": entry.get("id"),
            "type": str(event.get("type")),
            "recordedAt": entry.get("recordedAt"),
            "causationId": entry.get("causationId"),
            "usage": total
            if isinstance(total, (int, float)) and not isinstance(total, bool)
            else None,
            "summary": _summary(event),
            "divergent": index in self.divergent,
        }

    def page(
        self,
        offset: int = 0,
        limit: int = 100,
        type_filter: str | None = None,
        text: str | None = None,
    ) -> TablePage:
        """One window of rows: `{offset, limit, total, rows, query}`: the page holding row `offset` (see
        `page_offset`: the last page is full, ending at the last row)."""
        limit = max(1, min(int(limit), MAX_PAGE))
        hits = self.matches(type_filter, text)
        total = len(self.entries) if hits is None else len(hits)
        offset = page_offset(offset, limit, total)
        picked = range(offset, min(total, offset + limit))
        indices = list(picked) if hits is None else [hits[p] for p in picked]
        return {
            "offset": offset,
            "limit": limit,
            "total": total,
            "rows": [self.row(i) for i in indices],
            "query": {"type": type_filter or "", "text": text or ""},
        }
