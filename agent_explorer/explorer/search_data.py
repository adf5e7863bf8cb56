"""What the static export's search reads: every event and context of a window, encoded so the page (js/src/pysearch.js)
reproduces `search_log` and the table's text filter exactly, not approximately.

JSON alone would lose what the search depends on: key order (JavaScript reorders integer-like keys), Python's text
of a value (`1.0`, `1e-05`, `2026-03-02 09:00:00`), and the JSON orjson writes for it (the blob prefilter reads
that). So each value becomes a small tagged tree carrying both texts. Read-only: never executes or mutates anything.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import orjson

from .search import fold_contexts
from .table import entry_text

__all__ = ["encode", "search_corpus"]

# Node tags. A plain JSON string is a str leaf; every other node is a list starting with its tag:
#   [SCALAR, text] or [SCALAR, text, json]  a non-str leaf: Python's text of it, and orjson's JSON when that differs
#                                           (json None: orjson cannot write it, so the prefilter cannot reject)
#   [LIST, item, ...]                       a list or tuple
#   [MAP, key, value, key, value, ...]      a dict; a non-str key is [text] (no path segment names it)
#   [LIST_X, json, item, ...] / [MAP_X, json, key, value, ...]
#                                           another sequence or mapping type: walked the same, but orjson writes
#                                           it its own way (json as it does, or None)
SCALAR, LIST, MAP, LIST_X, MAP_X = 0, 1, 2, 3, 4


def _dumps(value: Any) -> str | None:
    try:
        return orjson.dumps(value, default=str).decode()
    except (orjson.JSONEncodeError, UnicodeError):
        return None


def encode(value: Any) -> Any:
    """`value` as the page's search walks it; mirrors search.py's `_leaves` type by type."""
    kind = type(value)
    if kind is str:
        return value
    if kind is dict:
        return [MAP, *_pairs(value)]
    if kind is list or kind is tuple:
        return [LIST, *(encode(item) for item in value)]
    if isinstance(value, Mapping):
        return [MAP_X, _dumps(value), *_pairs(value)]
    if isinstance(value, (list, tuple)):
        return [LIST_X, _dumps(value), *(encode(item) for item in value)]
    if isinstance(value, str):
        return str.__str__(value)  # a str subclass: the search reads its characters, orjson writes them
    if value is None or isinstance(value, bool):
        return [SCALAR, "null" if value is None else ("true" if value else "false")]
    text = str(value)
    written = _dumps(value)
    return [SCALAR, text] if written == text else [SCALAR, text, written]


def _pairs(mapping: Mapping[Any, Any]) -> Iterator[Any]:
    for key, item in mapping.items():
        yield key if type(key) is str else [f"{key}"]
        yield encode(item)


def search_corpus(machine: Any, entries: Sequence[Mapping[str, Any]], start: int, stop: int) -> dict[str, Any]:
    """Events of [start, stop] (`[id, causationId, event]`, plus the table filter's text where orjson fails) and the
    contexts as runs `[index, node]`: a run starts where the fold made a new context object (search_log searches
    a context once per object and extends its hit over the run)."""
    events = []
    for i in range(start, stop + 1):
        entry = entries[i]
        row = [encode(entry.get("id")), encode(entry.get("causationId")), encode(entry.get("event"))]
        text, by_orjson = entry_text(entry)
        if not by_orjson:
            row.append(text)  # the table filter's haystack, as Python's fallback wrote it
        events.append(row)
    contexts: list[list[Any]] = []
    previous: Any = None
    first = True
    before_any = True  # search_log starts from "previous context: None", so leading None contexts go unsearched
    for i, context in enumerate(fold_contexts(machine, entries)):
        if i > stop:
            break
        if i >= start and (first or context is not previous):
            contexts.append([i, encode(context), before_any and context is None])
            first = False
        before_any = before_any and context is None
        previous = context
    return {"start": start, "events": events, "contexts": contexts}
