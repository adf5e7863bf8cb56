"""Cumulative usage totals at any index of a log: `get_usage_from_events` over the prefix, checkpointed.

The log package's `get_usage_from_events` is the one definition of the totals (token keys always present,
nested counters summed, a missing `totalTokens` derived); this index only makes it cheap per frame: it keeps
its result every K usage records and folds at most K more on a lookup. A store's usage (rows per thread, model
and state) is `agent_explorer.runs.store_usage`'s, a `StoreUsage`. Read-only over the entries.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from typing import Any

from ..engine.values import value_text
from ..eventlog import USAGE_EVENT_TYPE, get_usage_from_events
from .prices import Prices, record_cost
from .protocol import UsageLedgerView

__all__ = ["StoreUsage", "UsageIndex", "UsageLedger"]

# Usage records between stored totals: a lookup folds at most this many, on every frame (the cursor's hot path).
# 32 keeps a lookup ~0.1 ms (256 cost ~0.6 ms, a third of a frame, on the 100k-entry benchmark log) for one small
# totals dict per 32 records.
CHECKPOINT_EVERY = 32


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
        # checkpoints[j] = totals of the first j * every usage records
        self._checkpoints: list[dict[str, Any]] = [{}]
        self._scanned = 0
        self.grown()

    def grown(self) -> None:
        """Index the entries appended since the last look (a followed thread grows its list in place)."""
        entries, positions, every = self.entries, self.positions, self.every
        for i in range(self._scanned, len(entries)):
            entry = entries[i]
            # Fast path for the common shape (plain dicts); anything odd is checked the slow way.
            try:
                if entry["event"]["type"] == USAGE_EVENT_TYPE:
                    positions.append(i)
            except (KeyError, TypeError):
                event = entry.get("event") if isinstance(entry, Mapping) else None
                if isinstance(event, Mapping) and event.get("type") == USAGE_EVENT_TYPE:
                    positions.append(i)
        self._scanned = len(entries)
        for start in range((len(self._checkpoints) - 1) * every, len(positions) - every + 1, every):
            chunk = self._records(start, start + every)
            self._checkpoints.append(_combine(self._checkpoints[-1], get_usage_from_events(chunk)))

    def _records(self, start: int, stop: int) -> list[Mapping[str, Any]]:
        return [self.entries[p] for p in self.positions[start:stop]]

    def count_at(self, index: int) -> int:
        """How many usage records are in entries [0, index]."""
        return bisect.bisect_right(self.positions, index)

    def totals_at(self, index: int) -> dict[str, Any]:
        """`get_usage_from_events(entries[: index + 1])`, or {} before the first usage record."""
        count = self.count_at(index)
        if count == 0:
            return {}
        j = min(count // self.every, len(self._checkpoints) - 1)
        rest = get_usage_from_events(self._records(j * self.every, count))
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


# -- the ledger: one row per usage record, with the state the machine was in -------------------------------

def _flat_numbers(value: Mapping[str, Any], prefix: str = "") -> dict[str, float | int]:
    out: dict[str, float | int] = {}
    for key, sub in value.items():
        name = f"{prefix}{key}"
        if isinstance(sub, Mapping):
            out.update(_flat_numbers(sub, name + "."))
        elif isinstance(sub, (int, float)) and not isinstance(sub, bool):
            out[name] = sub
    return out


class UsageLedger(Mapping[str, Any]):
    """`@agent.usage` of a run up to `at`, row by row, with the state the machine was in when it was journaled.

    Reads like the totals dict of `get_usage_from_events(entries[: at + 1])` (so `ledger["totalTokens"]`
    works); `to_pandas()` is the ledger (index, requestId, model, state, every numeric usage field, cost,
    cumulative tokens), `by_model()` / `by_state()` / `by_model_and_state()` the sums, `compare(other)` two
    runs side by side. A usage entry never transitions, so "the state it was journaled in" is the state at
    its own index (the checkpointed source answers it; positions are visited in order, one step each).
    """

    def __init__(
        self,
        entries: Sequence[Mapping[str, Any]],
        state_at: Any = None,
        *,
        at: int | None = None,
        index: UsageIndex | None = None,
        label: str = "run",
        prices: Prices | None = None,
    ) -> None:
        self.entries = entries
        self.label = label
        self.prices = prices
        self.at = (
            len(entries) - 1 if at is None else max(0, min(int(at), len(entries) - 1))
        )
        self.index = (
            index
            if index is not None and index.entries is entries
            else UsageIndex(entries)
        )
        self._state_at = state_at
        self._rows: list[dict[str, Any]] | None = None
        # The ledgers of the branches given to Explorer.usage(compare=...), for compare() without arguments.
        self.compared: list[UsageLedger] = []
        self._totals = self.index.totals_at(self.at)

    # Mapping: the cumulative totals (same keys as get_usage_from_events)
    def __getitem__(self, key: str) -> Any:
        return self._totals[key]

    def __iter__(self) -> Any:
        return iter(self._totals)

    def __len__(self) -> int:
        return len(self._totals)

    def __repr__(self) -> str:
        return f"UsageLedger({self.label!r}, records={self.index.count_at(self.at)}, totals={self._totals!r})"

    @property
    def totals(self) -> dict[str, Any]:
        return dict(self._totals)

    @property
    def cost_usd(self) -> float | None:
        """What the records up to `at` cost (recorded costs, else the explorer's `prices`); None when no record
        has a cost or a price."""
        rows = self.rows()
        return running_cost(rows) if any(row.get("cost") is not None for row in rows) else None

    def rows(self) -> list[dict[str, Any]]:
        """One dict per usage record in [0, at]; computed once."""
        if self._rows is not None:
            return self._rows

        rows: list[dict[str, Any]] = []
        running: dict[str, float] = {}
        # Which state made the request a record pays for. The entries a request caused (its completion, the
        # decision it returned: causationId = the request id) were journaled in reply to it, so the state just
        # before the latest of them up to the record is the state that was waiting on the model; a record
        # journaled before any reply (or with none) was spent in the state on view at its own index. The state
        # at the record's own index would be the state *after* the call finished (`waiting`, not `answering`).
        replies: dict[Any, list[int]] = {}
        for i in range(self.at + 1):
            entry = self.entries[i]
            cause = entry.get("causationId")
            if cause is not None and entry["event"].get("type") != USAGE_EVENT_TYPE:
                replies.setdefault(cause, []).append(i)
        for position in self.index.positions[: self.index.count_at(self.at)]:
            entry = self.entries[position]
            event = entry["event"]
            usage = (
                event.get("usage") if isinstance(event.get("usage"), Mapping) else {}
            )
            numbers = _flat_numbers(usage)
            priced = record_cost(numbers, event.get("model"), self.prices)
            has_cost = priced is not None
            cost = priced or 0.0
            state = (
                value_text(self._state_at(position).value)
                if self._state_at is not None
                else None
            )
            answered = replies.get(event.get("requestId") or entry.get("causationId"), [])
            reply = answered[bisect.bisect_right(answered, position) - 1] if answered and answered[0] < position else None
            requested = (
                None
                if self._state_at is None
                else state
                if reply is None or reply == 0
                else value_text(self._state_at(reply - 1).value)
            )
            for key in ("totalTokens", "inputTokens", "outputTokens"):
                running[key] = running.get(key, 0) + (numbers.get(key) or 0)
            if has_cost:
                running["cost"] = running.get("cost", 0) + cost
            rows.append(
                {
                    "index": position,
                    "requestId": event.get("requestId"),
                    "model": str(event.get("model") or "(unknown)"),
                    "state": state,
                    "requestedIn": requested,
                    **numbers,
                    "cost": cost if has_cost else None,
                    "cumulativeTokens": running.get("totalTokens", 0),
                    "cumulativeCost": running.get("cost")
                    if has_cost or "cost" in running
                    else None,
                }
            )
        self._rows = rows
        return rows

    def to_pandas(self) -> Any:
        import pandas as pd

        frame = pd.DataFrame(self.rows())
        if frame.empty:
            frame = pd.DataFrame(
                columns=[
                    "index",
                    "requestId",
                    "model",
                    "state",
                    "requestedIn",
                    "inputTokens",
                    "outputTokens",
                    "totalTokens",
                    "cost",
                    "cumulativeTokens",
                    "cumulativeCost",
                ]
            )
        for column in (
            "cost",
            "cumulativeCost",
        ):  # no record carried a cost: no cost columns
            if column in frame and frame[column].isna().all():
                frame = frame.drop(columns=column)
        frame.attrs["label"] = self.label
        return frame

    def _group(self, keys: list[str]) -> Any:
        frame = self.to_pandas()
        numeric = [
            c
            for c in frame.columns
            if c
            not in (
                "index",
                "requestId",
                "model",
                "state",
                "requestedIn",
                "cumulativeTokens",
                "cumulativeCost",
            )
        ]
        if frame.empty:
            return (
                frame[keys + numeric + ["index"]]
                .rename(columns={"index": "records"})
                .set_index(keys)
            )
        grouped = frame.groupby(keys, sort=True, dropna=False)
        out = grouped[numeric].sum(min_count=1)
        out.insert(0, "records", grouped.size())
        return (
            out.sort_values("totalTokens", ascending=False)
            if "totalTokens" in out
            else out
        )

    def by_model(self) -> Any:
        """Sums per model (records, tokens, cost), most expensive first."""
        return self._group(["model"])

    def by_state(self, when: str = "journaled") -> Any:
        """Sums per state the machine was in when the usage was journaled (`when="requested"`: per state that
        made the request, i.e. the state just before the reply it paid for was journaled; the widget's "state
        when spent")."""
        return self._group(["requestedIn" if when == "requested" else "state"])

    def by_model_and_state(self) -> Any:
        return self._group(["model", "state"])

    def compare(self, *others: UsageLedger) -> Any:
        """Totals per model of this ledger and of `others` (default: the branches it was asked to compare
        with) side by side; columns are the ledgers' labels, the last row sums every model."""
        import pandas as pd

        others = others or tuple(self.compared)
        columns = {}
        for ledger in (self, *others):
            by = ledger.by_model()
            columns[(ledger.label, "totalTokens")] = (
                by["totalTokens"] if "totalTokens" in by else pd.Series(dtype=float)
            )
            if "cost" in by and by["cost"].notna().any():
                columns[(ledger.label, "cost")] = by["cost"]
        frame = pd.DataFrame(columns).fillna(0)
        frame.loc["(all)"] = frame.sum()
        return frame

    def to_json(self, max_points: int = 240) -> UsageLedgerView:
        """The widget's view: per-model cumulative series (down-sampled), per-state sums, per-model totals."""
        rows = self.rows()
        series: dict[str, list[list[float | int]]] = {}
        running: dict[str, float] = {}
        step = max(1, -(-len(rows) // max_points))
        for k, row in enumerate(rows):
            model = row["model"]
            running[model] = running.get(model, 0) + (row.get("totalTokens") or 0)
            if (
                k % step == step - 1
                or k == len(rows) - 1
                or len(series.get(model, [])) == 0
            ):
                series.setdefault(model, []).append([row["index"], running[model]])
        for (
            model,
            points,
        ) in series.items():  # every line ends at its model's final total
            if points[-1][1] != running[model]:
                points.append([rows[-1]["index"], running[model]])
        by_state: dict[str, list[float]] = {}
        by_model: dict[str, list[float]] = {}
        for row in rows:
            for bucket, key in (
                (by_state, str(row["requestedIn"] if row["requestedIn"] is not None else row["state"])),
                (by_model, row["model"]),
            ):
                sums = bucket.setdefault(key, [0, 0, 0.0])
                sums[0] += 1
                sums[1] += row.get("totalTokens") or 0
                sums[2] += row.get("cost") or 0
        has_cost = any(row.get("cost") is not None for row in rows)
        order = sorted(by_state.items(), key=lambda kv: -kv[1][1])
        return {
            "label": self.label,
            "records": len(rows),
            "series": series,
            "byState": [
                [state, int(n), tokens, cost if has_cost else None]
                for state, (n, tokens, cost) in order[:40]
            ],
            "byModel": [
                [model, int(n), tokens, cost if has_cost else None]
                for model, (n, tokens, cost) in sorted(
                    by_model.items(), key=lambda kv: -kv[1][1]
                )
            ],
            "hasCost": has_cost,
            "total": self._totals.get("totalTokens", 0),
            "cost": running_cost(rows) if has_cost else None,
        }


def running_cost(rows: Sequence[Mapping[str, Any]]) -> float:
    return float(sum(row.get("cost") or 0 for row in rows))


class StoreUsage:
    """`@agent.usage` over the threads of a store: one row per (thread, model), in thread order.

    `to_pandas()` is that table (thread_id, model, records, inputTokens, outputTokens, totalTokens, cost; the
    records without a model under "(unknown)"); `by_model()` / `by_thread()` its sums; `totals` the sum over
    every thread of `get_usage_from_events` (every numeric field, `byModel` as it defines it); `cost_usd` what
    the records cost (recorded costs, else `prices`), None when none has a cost or a price. `threads` counts the
    threads read, `skipped` those of another machine.
    """

    TOKENS = ("inputTokens", "outputTokens", "totalTokens")

    def __init__(self, rows: list[dict[str, Any]], threads: int, skipped: int, totals: Mapping[str, Any]) -> None:
        self.rows = rows
        self.threads = threads
        self.skipped = skipped
        # The threads' get_usage_from_events summed (over no thread: its result over no entry).
        self._totals: dict[str, Any] = _combine(get_usage_from_events(()), totals)

    @property
    def totals(self) -> dict[str, Any]:
        return _combine({}, self._totals)  # a copy, nested objects included

    @property
    def cost_usd(self) -> float | None:
        costs = [row["cost"] for row in self.rows if row["cost"] is not None]
        return float(sum(costs)) if costs else None

    def __repr__(self) -> str:
        return (f"StoreUsage(threads={self.threads}, skipped={self.skipped}, rows={len(self.rows)}, "
                f"totalTokens={self.totals['totalTokens']})")

    def to_pandas(self) -> Any:
        import pandas as pd

        columns = ["thread_id", "model", "records", *self.TOKENS, "cost"]
        return pd.DataFrame([[row[c] for c in columns] for row in self.rows], columns=columns)

    def by_model(self) -> Any:
        return self.to_pandas().groupby("model")[["records", *self.TOKENS, "cost"]].sum(min_count=1)

    def by_thread(self) -> Any:
        return self.to_pandas().groupby("thread_id", sort=False)[["records", *self.TOKENS, "cost"]].sum(min_count=1)
