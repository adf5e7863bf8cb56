"""`RunSummaries`: the rows `summarize_runs` folded, in thread order, as pandas, counts and plain rows.

A container only: it folds nothing and reads nothing. Rows can be added batch by batch (`extend`), so a run
list shows the first page while the rest folds; pandas is imported only by `to_pandas`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..engine.snapshot import matches_state
from ..errors import AgentError
from .find import state_value
from .row import COLUMNS, STATUSES, RunSummary

__all__ = ["RunSummaries"]


class RunSummaries:
    """One `RunSummary` per thread, in thread order: `to_pandas()`, `counts()`, iteration, `summaries[thread_id]`.

    `folded` counts the entries folded to build these rows (0 when every row came whole from the cache);
    `cached` the rows served from the cache without folding.
    """

    def __init__(self, rows: Iterable[RunSummary] = (), *, folded: int = 0, cached: int = 0) -> None:
        self._rows: list[RunSummary] = []
        self._by_id: dict[str, int] = {}
        self.folded = folded
        self.cached = cached
        self.extend(rows)

    def extend(self, rows: Iterable[RunSummary]) -> None:
        """Add rows (a batch as it is folded); a thread already present is replaced in place."""
        for row in rows:
            at = self._by_id.get(row.thread_id)
            if at is None:
                self._by_id[row.thread_id] = len(self._rows)
                self._rows.append(row)
            else:
                self._rows[at] = row

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[RunSummary]:
        return iter(list(self._rows))

    def __contains__(self, thread_id: object) -> bool:
        return thread_id in self._by_id

    def __getitem__(self, thread_id: str) -> RunSummary:
        return self._rows[self._by_id[thread_id]]

    def get(self, thread_id: str) -> RunSummary | None:
        at = self._by_id.get(thread_id)
        return None if at is None else self._rows[at]

    @property
    def thread_ids(self) -> list[str]:
        return [row.thread_id for row in self._rows]

    def counts(self) -> dict[str, int]:
        """{status: number of threads}, every status of `STATUSES` present (0 when none)."""
        counts = dict.fromkeys(STATUSES, 0)
        for row in self._rows:
            counts[row.status] = counts.get(row.status, 0) + 1
        return counts

    def filtered(
        self,
        machine: Any = None,
        *,
        status: str | Iterable[str] | None = None,
        state: str | None = None,
        text: str | None = None,
        verified: bool | None = None,
    ) -> list[RunSummary]:
        """The rows a run list shows under these criteria (None: not filtered), in thread order.

        `status`: one status or a collection; `state`: the last state is, or is inside, this state (as
        snapshot.matches; a dotted path or '#id' of `machine`, which it needs); `text`: case-insensitive
        substring of the thread id; `verified`: True or False.
        """
        wanted = None if status is None else ({status} if isinstance(status, str) else set(status))
        if wanted is not None and not wanted <= set(STATUSES):
            raise AgentError(f"unknown status {sorted(wanted - set(STATUSES))}; a status is one of {list(STATUSES)}",
                             code="invalid-argument")
        target = None
        if state is not None:
            if machine is None:
                raise AgentError("filtering on state= needs the machine", code="invalid-argument")
            target = state_value(machine, state)
        needle = text.lower() if text else None
        return [
            row for row in self._rows
            if (wanted is None or row.status in wanted)
            and (target is None or (row.value is not None and matches_state(target, row.value)))
            and (needle is None or needle in row.thread_id.lower())
            and (verified is None or row.verified is verified)
        ]

    def to_json(self) -> list[dict[str, Any]]:
        """The rows as JSON objects (`thread_id` and the columns; NaN cost as None)."""
        return [row.to_json() for row in self._rows]

    def to_pandas(self) -> Any:
        """A DataFrame indexed by `thread_id`, in thread order, with the columns of docs/api.md §8."""
        import pandas as pd

        rows = self._rows
        frame = pd.DataFrame(
            {
                "entries": pd.array([r.entries for r in rows], dtype="int64"),
                "first_recorded": _timestamps([r.first_recorded for r in rows]),
                "last_recorded": _timestamps([r.last_recorded for r in rows]),
                "machine_id": pd.array([r.machine_id for r in rows], dtype="object"),
                "version": pd.array([r.version for r in rows], dtype="object"),
                "state": pd.array([r.state for r in rows], dtype="object"),
                "status": pd.array([r.status for r in rows], dtype="object"),
                "owed": pd.array([r.owed for r in rows], dtype="int64"),
                "verified": pd.array([r.verified for r in rows], dtype="object"),
                "divergent_index": pd.array([r.divergent_index for r in rows], dtype="Int64"),
                "total_tokens": pd.array([r.total_tokens for r in rows], dtype="int64"),
                "cost_usd": pd.array([r.cost_usd for r in rows], dtype="float64"),
                "error": pd.array([r.error for r in rows], dtype="object"),
            },
            index=pd.Index([r.thread_id for r in rows], name="thread_id", dtype="object"),
            columns=list(COLUMNS),
        )
        return frame

    def __repr__(self) -> str:
        counts = ", ".join(f"{status}={n}" for status, n in self.counts().items() if n)
        return f"RunSummaries({len(self)} threads: {counts or 'none'})"


def _timestamps(values: list[str | None]) -> Any:
    import pandas as pd

    return pd.to_datetime(pd.Series(values, dtype="object"), utc=True, errors="coerce", format="ISO8601").array
