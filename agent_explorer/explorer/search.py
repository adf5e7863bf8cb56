"""Search inside a run: a substring or regex, optionally under a JSON path, over every event and every context.

Events are scanned entry by entry (a serialized-blob prefilter skips most entries before any tree walk).
Contexts are scanned once per *change*: one pure forward fold of the log (one transition per entry, the same
rules as replay: seeded from the init entry, usage records never transition), and a context the engine did
not replace (the same object as the previous index's: the engine shares it when no `assign` ran) is not
searched again; a hit then covers the whole run of indices holding that context (`index`..`until`).
Read-only: never mutates entries, never executes actions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Self

import orjson

from ..errors import AgentError
from ..eventlog.fold import fold
from .protocol import SearchQueryView

__all__ = [
    "MARKS_CAP", "SearchHit", "SearchHits", "SearchQuery", "fold_contexts", "hit_marks", "hit_ranges", "parse_path",
    "search_log", "search_page", "thin",
]

EXCERPT = 120
PATHS_PER_HIT = 8
_SEGMENT = re.compile(r"\[(\d+|\*)\]|\.?([^.\[\]]+)")


class SearchHit(int):
    """One hit: an int (its log index, so `ex.index = hit` and `hits == [1, 7]` just work) with the details.

    `where` is "event" (the entry: its event, id, causation id) or "context" (the context at that index);
    `path` the first matching location (`event.output.text`, `context.notes[2]`), `paths` up to 8 of them;
    `text` an excerpt of the matched value; `until` the last index the same context holds (context hits).
    """

    index: int
    where: str
    path: str
    paths: list[str]
    text: str
    until: int

    def __new__(
        cls,
        index: int,
        where: str,
        paths: list[str],
        text: str,
        until: int | None = None,
    ) -> Self:
        hit = super().__new__(cls, index)
        hit.index = index
        hit.where = where
        hit.paths = paths
        hit.path = paths[0] if paths else ""
        hit.text = text
        hit.until = index if until is None else until
        return hit

    def __repr__(self) -> str:
        span = f"..{self.until}" if self.until != self.index else ""
        return (
            f"SearchHit({self.index}{span}, {self.where}, {self.path!r}, {self.text!r})"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "where": self.where,
            "path": self.path,
            "text": self.text,
            "until": self.until,
        }


def parse_path(path: str) -> tuple[str | None, list[str | int]]:
    """`"event.output.text"` / `"$.context.items[*].name"` / `"output.text"` -> (scope or None, segments).

    A leading `event` or `context` (after an optional `$`) picks the scope; `*` and `[*]` match any key or
    item; `[n]` an item. Anything else is a key.
    """
    text = path.strip()
    if text.startswith("$"):
        text = text[1:].lstrip(".")
    segments: list[str | int] = []
    position = 0
    for match in _SEGMENT.finditer(text):
        if match.start() != position:
            raise AgentError(
                f"search path {path!r} is not a JSON path (at character {position})",
                code="invalid-search-path",
            )
        index, key = match.group(1), match.group(2)
        segments.append(
            "*" if index == "*" else int(index) if index is not None else key
        )
        position = match.end()
    if position != len(text):
        raise AgentError(
            f"search path {path!r} is not a JSON path (at character {position})",
            code="invalid-search-path",
        )
    scope = None
    if segments and segments[0] in ("event", "context"):
        scope = str(segments.pop(0))
    return scope, segments


class SearchHits(list[SearchHit]):
    """The hits of one search, in index order: a list (so `hits == [1, 7]`, `hits[0]`, `len(hits)`) that also
    reads as a table."""

    def to_pandas(self) -> Any:
        """One row per hit: `index, until, where, path, text`."""
        import pandas as pd

        return pd.DataFrame(
            [hit.to_json() for hit in self],
            columns=["index", "until", "where", "path", "text"],
        )


@dataclass(frozen=True)
class SearchQuery:
    """What to look for and where: `scope` is "events", "context" or "both"; `case` makes it case-sensitive."""

    text: str
    regex: bool = False
    path: str | None = None
    scope: str = "both"
    case: bool = False
    type: str | None = None

    def compile(self) -> Callable[[str], re.Match[str] | None]:
        flags = 0 if self.case else re.IGNORECASE
        try:
            pattern = re.compile(
                self.text if self.regex else re.escape(self.text), flags
            )
        except re.error as error:
            raise AgentError(
                f"search pattern {self.text!r} is not a valid regular expression: {error}",
                code="invalid-search-pattern",
            ) from error
        return pattern.search

    def to_json(self) -> SearchQueryView:
        return {
            "text": self.text,
            "regex": self.regex,
            "path": self.path or "",
            "scope": self.scope,
            "case": self.case,
            "type": self.type or "",
        }


def _leaves(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """(path, text) of every scalar under `value`; keys are not searched (a path query is how to name them)."""
    kind = type(
        value
    )  # JSON's own types first: an ABC isinstance check costs ~1 µs, and this runs per leaf
    if kind is str:
        yield path, value
    elif kind is dict or (kind is not list and isinstance(value, Mapping)):
        for key, sub in value.items():
            yield from _leaves(sub, f"{path}.{key}" if path else str(key))
    elif isinstance(value, (list, tuple)):
        for i, sub in enumerate(value):
            yield from _leaves(sub, f"{path}[{i}]")
    elif isinstance(value, str):
        yield path, value
    elif value is None or isinstance(value, bool):
        yield path, "null" if value is None else ("true" if value else "false")
    else:
        yield path, str(value)


def _select(
    value: Any, segments: Sequence[str | int], path: str
) -> Iterator[tuple[str, Any]]:
    """The values a parsed path names inside `value` (with their concrete paths)."""
    if not segments:
        yield path, value
        return
    head, rest = segments[0], segments[1:]
    is_mapping = type(value) is dict or (
        type(value) is not list and isinstance(value, Mapping)
    )
    if head == "*":
        if is_mapping:
            for key, sub in value.items():
                yield from _select(sub, rest, f"{path}.{key}")
        elif isinstance(value, (list, tuple)):
            for i, sub in enumerate(value):
                yield from _select(sub, rest, f"{path}[{i}]")
    elif isinstance(head, int):
        if isinstance(value, (list, tuple)) and -len(value) <= head < len(value):
            yield from _select(value[head], rest, f"{path}[{head}]")
    elif is_mapping and head in value:
        yield from _select(value[head], rest, f"{path}.{head}")


def _excerpt(text: str, match: re.Match[str]) -> str:
    if len(text) <= EXCERPT:
        return text
    start = max(0, match.start() - EXCERPT // 3)
    piece = text[start : start + EXCERPT]
    return ("…" if start else "") + piece + ("…" if start + EXCERPT < len(text) else "")


class _Matcher:
    """Finds matching leaves of one JSON value under the query's path; the blob prefilter lives here."""

    def __init__(self, query: SearchQuery, segments: list[str | int]) -> None:
        self.find = query.compile()
        self.segments = segments
        needle = query.text if query.case else query.text.lower()
        # A plain needle without characters JSON escapes appears verbatim in the serialized value iff some
        # leaf (or key) holds it: a cheap reject before walking the tree.
        plain = (
            not query.regex
            and not any(c in needle for c in '"\\')
            and all(ord(c) >= 0x20 for c in needle)
        )
        self.needle = needle if plain else None
        self.case = query.case

    def maybe(self, value: Any) -> bool:
        if self.needle is None:
            return True
        try:
            blob = orjson.dumps(value, default=str).decode()
        except (orjson.JSONEncodeError, UnicodeError):
            return True  # orjson cannot write it (a non-str key, an int past 64 bits): walk the tree instead
        return self.needle in (blob if self.case else blob.lower())

    def hits(self, value: Any, root: str) -> tuple[list[str], str] | None:
        if not self.maybe(value):
            return None
        paths: list[str] = []
        excerpt = ""
        for base, selected in _select(value, self.segments, root):
            for path, text in _leaves(selected, base):
                match = self.find(text)
                if match is not None:
                    if not paths:
                        excerpt = _excerpt(text, match)
                    paths.append(path)
                    if len(paths) >= PATHS_PER_HIT:
                        return paths, excerpt
        return (paths, excerpt) if paths else None


def fold_contexts(machine: Any, entries: Sequence[Mapping[str, Any]]) -> Iterator[Any]:
    """The context after each entry, by one pure fold (the log's `fold`, so its rules; versions are not
    re-checked: the explorer checked them when it opened the log; an entry that cannot be folded keeps the
    context before it). Cheaper than asking a Timeline index by index."""
    for step in fold(machine, entries, check_version=False, errors="record"):
        yield step.snapshot.context


class _ContextMatcher:
    """Searches a context by its top-level keys, reusing the result of every key whose value is the very
    object it was at the previous change (an `assign` replaces only the keys it updates; the engine shares
    the rest), so a change costs the size of what changed, not of the whole context."""

    def __init__(self, matcher: _Matcher) -> None:
        self.matcher = matcher
        self.memo: dict[str, tuple[Any, tuple[list[str], str] | None]] = {}

    def hits(self, context: Any) -> tuple[list[str], str] | None:
        if self.matcher.segments or not isinstance(context, Mapping):
            return self.matcher.hits(
                context, "context"
            )  # a JSON path selects across keys: search it whole
        memo: dict[str, tuple[Any, tuple[list[str], str] | None]] = {}
        paths: list[str] = []
        excerpt = ""
        for key, value in context.items():
            seen = self.memo.get(key)
            found = (
                seen[1]
                if seen is not None and seen[0] is value
                else self.matcher.hits(value, f"context.{key}")
            )
            memo[key] = (value, found)
            if found is not None:
                if not paths:
                    excerpt = found[1]
                paths.extend(found[0])
        self.memo = memo
        return (paths[:PATHS_PER_HIT], excerpt) if paths else None


def search_log(
    entries: Sequence[Mapping[str, Any]],
    query: SearchQuery,
    contexts: Iterator[Any] | None = None,
    *,
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[SearchHit]:
    """Every hit of `query` in `entries` (events) and, with `contexts`, in the contexts; sorted by index.

    `contexts` yields the context after entry 0, 1, 2, ... (`fold_contexts`: one pass, no random access).
    `limit` stops early (the returned hits are then the first `limit` by index, events and contexts
    interleaved).
    """
    scope, segments = parse_path(query.path) if query.path else (None, [])
    if query.scope not in ("events", "context", "both"):
        raise AgentError(
            f"search scope must be 'events', 'context' or 'both', not {query.scope!r}",
            code="invalid-search-scope",
        )
    want_events = query.scope in ("events", "both") and scope in (None, "event")
    want_context = (
        query.scope in ("context", "both")
        and scope in (None, "context")
        and contexts is not None
    )
    matcher = _Matcher(query, segments)
    by_key = _ContextMatcher(matcher)
    hits: list[SearchHit] = []
    type_filter = query.type or None
    previous: Any = None
    open_hit: SearchHit | None = None
    n = len(entries)
    for i in range(n):
        entry = entries[i]
        if want_events and (type_filter is None or _type_of(entry) == type_filter):
            found = _entry_hits(matcher, entry, scope is None)
            if found is not None:
                hits.append(SearchHit(i, "event", *found))
        if want_context:
            context = next(contexts)  # type: ignore[arg-type]
            # Unchanged (the engine kept the object): extend the open hit instead of searching it again.
            if context is previous:
                if open_hit is not None:
                    open_hit.until = i
            else:
                previous = context
                found = by_key.hits(context)
                if found is None:
                    open_hit = None
                elif (
                    open_hit is not None
                    and open_hit.paths == found[0]
                    and open_hit.text == found[1]
                ):
                    open_hit.until = i  # a new context, matching the same way: one hit over the whole run
                else:
                    open_hit = SearchHit(i, "context", *found)
                    hits.append(open_hit)
        if progress is not None and i % 20_000 == 0:
            progress(i, n)
        if limit is not None and len(hits) >= limit:
            break
    return hits[:limit] if limit is not None else hits


def _entry_hits(
    matcher: _Matcher, entry: Mapping[str, Any], whole_entry: bool
) -> tuple[list[str], str] | None:
    """The event's leaves (under the path, if any); without a path also the entry's id and causation id."""
    found = matcher.hits(entry.get("event"), "event")
    if whole_entry and matcher.segments == []:
        for key in ("id", "causationId"):
            value = entry.get(key)
            if isinstance(value, str):
                match = matcher.find(value)
                if match is not None:
                    paths, text = (
                        found if found is not None else ([], _excerpt(value, match))
                    )
                    found = ([*paths, key], text)
    return found


def _type_of(entry: Mapping[str, Any]) -> Any:
    event = entry.get("event")
    return event.get("type") if isinstance(event, Mapping) else None


PAGE = 50
MARKS_CAP = 2_000  # indices marked on the slider track at most (search hits, table filter matches)


def search_page(
    hits: Sequence[SearchHit],
    query: SearchQuery,
    offset: int = 0,
    error: str | None = None,
) -> dict[str, Any]:
    """The `search_results` traitlet: one page of hits (the browser never holds them all)."""
    offset = max(0, min(int(offset), max(0, len(hits) - 1)))
    return {
        "query": query.to_json(),
        "total": len(hits),
        "offset": offset,
        "limit": PAGE,
        "hits": [hit.to_json() for hit in hits[offset : offset + PAGE]],
        "error": error,
    }


def hit_ranges(hits: Sequence[SearchHit], cap: int = 500) -> list[list[int]]:
    """`[[index, until], ...]` of the hits that span indices (a context holding its match): drawn as bars."""
    return [[hit.index, hit.until] for hit in hits if hit.until > hit.index][:cap]


def hit_marks(hits: Sequence[SearchHit], cap: int = MARKS_CAP) -> list[int]:
    """Indices to mark on the slider track: every hit's start, evenly thinned to `cap` when there are more."""
    return thin(sorted({hit.index for hit in hits}), cap)


def thin(indices: Sequence[int], cap: int = MARKS_CAP) -> list[int]:
    """At most `cap` of the sorted `indices`, evenly spread (all of them when there are no more)."""
    if len(indices) <= cap:
        return list(indices)
    step = len(indices) / cap
    return [indices[int(k * step)] for k in range(cap)]
