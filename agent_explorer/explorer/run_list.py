"""What the run list shows: a store's summary rows, filtered, sorted and cut into pages. Pure (pandas only).

The `Runs` widget holds one `RunList` and grows it as threads fold; the browser only ever gets one page of it
(`page()`), so a store of 100,000 threads never crosses the wire. A filter or a sort is a criterion kept here, so
rows that fold later (the background, a followed store) land where they belong. Never folds, never reads a store.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..errors import AgentError
from .protocol import RunRow, RunsFilterView, RunsPage

__all__ = ["COLUMNS", "STATUSES", "RunFilter", "RunList", "make_filter", "state_matches", "state_paths"]

STATUSES = ("done", "error", "idle", "in-flight", "skipped", "unreadable")
#: The columns a list sorts by (the summary's own names, thread_id included).
COLUMNS = ("thread_id", "entries", "first_recorded", "last_recorded", "machine_id", "version", "state", "status",
           "owed", "verified", "divergent_index", "total_tokens", "cost_usd", "error")


def state_paths(text: str) -> list[str]:
    """The active leaf paths of a state as one line: "a.(b.c | d.e) | f" -> ["a.b.c", "a.d.e", "f"].

    The inverse of engine/values.value_text: regions are joined by " | ", a nested parallel state's regions are
    in parentheses after its key."""
    paths, _ = _parse_list(text.strip(), 0)
    return paths


def _parse_list(text: str, at: int) -> tuple[list[str], int]:
    paths: list[str] = []
    while at < len(text):
        found, at = _parse_item(text, at)
        paths.extend(found)
        if text.startswith(" | ", at):
            at += 3
            continue
        break
    return paths, at


def _parse_item(text: str, at: int) -> tuple[list[str], int]:
    start = at
    while at < len(text) and text[at] not in ".|()" and not text.startswith(" | ", at):
        at += 1
    key = text[start:at]
    if at < len(text) and text[at] == ".":
        at += 1
        if at < len(text) and text[at] == "(":
            inner, at = _parse_list(text, at + 1)
            at += 1 if at < len(text) and text[at] == ")" else 0
        else:
            inner, at = _parse_item(text, at)
        return [f"{key}.{path}" for path in inner], at
    return [key], at


def state_matches(text: str | None, state: str) -> bool:
    """Whether a row's state (one line) is `state` or inside it, as `snapshot.matches("a.b")` says."""
    if not text:
        return False
    return any(path == state or path.startswith(state + ".") for path in state_paths(text))


@dataclass(frozen=True)
class RunFilter:
    """What the list shows: every given criterion must hold (None: no criterion)."""

    status: frozenset[str] | None = None
    state: str | None = None
    text: str | None = None
    verified: bool | None = None

    def view(self) -> RunsFilterView:
        return {"status": sorted(self.status or ()), "state": self.state or "", "text": self.text or "",
                "verified": self.verified}


def make_filter(status: str | Collection[str] | None = None, state: str | None = None, text: str | None = None,
                verified: bool | None = None) -> RunFilter:
    """A checked `RunFilter`: a status outside STATUSES or a verified that is not a bool is refused by name."""
    statuses: frozenset[str] | None = None
    if status is not None:
        given = [status] if isinstance(status, str) else list(status)
        unknown = sorted(str(s) for s in given if s not in STATUSES)
        if unknown:
            raise AgentError(f"unknown status {', '.join(map(repr, unknown))}: the statuses are {', '.join(STATUSES)}",
                             code="invalid-argument")
        statuses = frozenset(given) or None
    if verified is not None and not isinstance(verified, bool):
        raise AgentError(f"verified must be True, False or None, not {verified!r}", code="invalid-argument")
    for name, value in (("state", state), ("text", text)):
        if value is not None and not isinstance(value, str):
            raise AgentError(f"{name} must be a str or None, not {type(value).__name__}", code="invalid-argument")
    return RunFilter(statuses, state or None, text or None, verified)


@dataclass
class RunList:
    """The rows folded so far (one per thread, indexed by thread_id), the filter and the sort in force."""

    rows: pd.DataFrame = field(default_factory=pd.DataFrame)
    filter: RunFilter = field(default_factory=RunFilter)
    sort_column: str = "last_recorded"
    descending: bool = True
    resolve_state: Any = None  # "#id" -> its dotted path, from the machine (None: ids are not resolved)
    _shown: list[str] | None = None

    def update(self, rows: pd.DataFrame) -> None:
        """Add or replace the rows of the threads in `rows` (a thread that grew replaces its row)."""
        if rows.empty:
            return
        if self.rows.empty:
            self.rows = rows.copy()
        else:
            kept = self.rows.drop(index=self.rows.index.intersection(rows.index))
            self.rows = pd.concat([kept, rows]) if not kept.empty else rows.copy()
        self._shown = None

    def set_filter(self, run_filter: RunFilter) -> None:
        if run_filter.state is not None:
            self._state_path(run_filter.state)  # an unknown "#id" is refused now, and the filter left as it was
        self.filter = run_filter
        self._shown = None

    def set_sort(self, column: str, descending: bool) -> None:
        if column not in COLUMNS:
            raise AgentError(f"cannot sort by {column!r}: the columns are {', '.join(COLUMNS)}",
                             code="invalid-argument")
        self.sort_column, self.descending = column, bool(descending)
        self._shown = None

    def counts(self) -> dict[str, int]:
        """Threads per status, over every row folded (the filter does not change them)."""
        found = self.rows["status"].value_counts().to_dict() if not self.rows.empty else {}
        return {status: int(found.get(status, 0)) for status in STATUSES}

    @property
    def shown(self) -> list[str]:
        """The thread ids the list shows, in order (cached until the rows, the filter or the sort change)."""
        if self._shown is None:
            self._shown = self._compute()
        return self._shown

    def _compute(self) -> list[str]:
        rows = self.rows
        if rows.empty:
            return []
        keep = pd.Series(True, index=rows.index)
        wanted = self.filter
        if wanted.status is not None:
            keep &= rows["status"].isin(wanted.status)
        if wanted.text is not None:
            needle = wanted.text.casefold()
            keep &= pd.Series([needle in str(tid).casefold() for tid in rows.index], index=rows.index)
        if wanted.verified is not None:
            keep &= pd.Series([_known(value) and bool(value) == wanted.verified for value in rows["verified"]],
                              index=rows.index)
        if wanted.state is not None:
            target = self._state_path(wanted.state)
            keep &= pd.Series([state_matches(value if isinstance(value, str) else None, target)
                               for value in rows["state"]], index=rows.index)
        chosen = rows[keep]
        column = self.sort_column
        if column == "thread_id":
            ordered = chosen.sort_index(ascending=not self.descending, kind="stable")
        else:
            # Ties keep thread order; missing values (NaT, NaN, None) go last whichever the direction.
            ordered = chosen.sort_index(kind="stable").sort_values(
                column, ascending=not self.descending, kind="stable", na_position="last", key=_sort_key)
        return [str(tid) for tid in ordered.index]

    def _state_path(self, state: str) -> str:
        if state.startswith("#") and self.resolve_state is not None:
            return str(self.resolve_state(state))
        return state

    def page(self, offset: int, limit: int) -> RunsPage:
        """One page of what the list shows, as the browser draws it."""
        shown = self.shown
        offset = max(0, min(int(offset), max(len(shown) - 1, 0) // max(limit, 1) * max(limit, 1)))
        ids = shown[offset:offset + limit]
        return {"offset": offset, "limit": limit, "total": len(shown), "rows": [self.row(tid) for tid in ids],
                "sort": {"column": self.sort_column, "descending": self.descending}, "filter": self.filter.view()}

    def row(self, thread_id: str) -> RunRow:
        r = self.rows.loc[thread_id]
        return {
            "threadId": thread_id,
            "entries": _int(r.get("entries")) or 0,
            "lastRecorded": _iso(r.get("last_recorded")),
            "version": _text(r.get("version")),
            "state": _text(r.get("state")) or "",
            "status": str(r.get("status")),
            "owed": _int(r.get("owed")),
            "verified": r.get("verified") if _known(r.get("verified")) else None,
            "divergentIndex": _int(r.get("divergent_index")),
            "tokens": _int(r.get("total_tokens")) or 0,
            "cost": _float(r.get("cost_usd")),
            "error": _text(r.get("error")),
        }


def _sort_key(values: pd.Series) -> pd.Series:
    if values.dtype == object:
        # Mixed columns (verified: True / False / None; text with None) sort as text, missing last.
        return values.map(lambda v: None if not _known(v) else (str(v) if not isinstance(v, bool) else int(v)))
    return values


def _known(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return False
    return not (isinstance(value, float) and math.isnan(value))


def _int(value: Any) -> int | None:
    return int(value) if _known(value) else None


def _float(value: Any) -> float | None:
    return float(value) if _known(value) else None


def _text(value: Any) -> str | None:
    return str(value) if _known(value) else None


def _iso(value: Any) -> str | None:
    if not _known(value):
        return None
    if isinstance(value, pd.Timestamp):
        return str(value.isoformat(timespec="milliseconds")).replace("+00:00", "Z")
    return str(value)
