"""`store_usage` and `store_coverage`: a store's spend and chart coverage without Jupyter, on the fleet path.

The rules are the explorer's own, applied per thread: usage records are read and priced as `ex.usage()` reads
them (`UsageLedger`: the state a record was journaled in comes from the thread's fold), coverage is counted
as `ex.coverage()` counts it (`coverage_of_store`). Only reads the store.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import AgentError
from ..eventlog.fold import fold
from ..eventlog.usage import get_usage_from_events
from ..explorer.coverage import Coverage, coverage_of_store
from ..explorer.prices import Prices
from ..explorer.usage import StoreUsage, UsageLedger, _combine
from ..fleet.refs import machine_spec
from ..fleet.runner import BatchContext, map_batches, read_threads, without_cyclic_gc
from ..stores.base import EventLogStore

__all__ = ["StoreCoverage", "StoreLedger", "store_coverage", "store_usage", "store_usage_batch"]


class StoreLedger(StoreUsage):
    """A store's `@agent.usage`: one row per (thread, model, state the record was journaled in), thread order.

    `total_tokens` is the store's total; `totals` the sum of every thread's `get_usage_from_events`;
    `to_pandas()` the rows (thread_id, model, state, records, inputTokens, outputTokens, totalTokens, cost: cost
    None/NaN where no record had a recorded cost or a price); `by_model()`, `by_thread()`, `by_state()` sums.
    """

    @property
    def total_tokens(self) -> int:
        total = self.totals.get("totalTokens", 0)
        return int(total) if float(total).is_integer() else total

    def to_pandas(self) -> Any:
        import pandas as pd

        columns = ["thread_id", "model", "state", "records", *self.TOKENS, "cost"]
        return pd.DataFrame([[row[c] for c in columns] for row in self.rows], columns=columns)

    def by_state(self) -> Any:
        return self.to_pandas().groupby("state", sort=False)[["records", *self.TOKENS, "cost"]].sum(min_count=1)

    def __repr__(self) -> str:
        return (f"StoreLedger(threads={self.threads}, skipped={self.skipped}, rows={len(self.rows)}, "
                f"total_tokens={self.total_tokens})")


def store_usage(
    store: EventLogStore | str,
    machine: Any,
    *,
    threads: Iterable[str] | None = None,
    executor: concurrent.futures.Executor | None = None,
    prices: Prices | Mapping[str, Mapping[str, float]] | None = None,
    batch_size: int | None = None,
) -> StoreLedger:
    """The usage of every thread of `machine` in `store` (threads of other machines are `skipped`), per thread,
    model and state. A thread that cannot be read or seeded stops the sum with an error naming it (a total with
    holes would lie), as `Explorer.usage(store=...)` always has."""
    if isinstance(threads, str):
        raise AgentError("threads must be an iterable of thread ids, not one str", code="invalid-argument")
    spec = machine_spec(machine)
    table = prices if prices is None or isinstance(prices, Prices) else Prices(prices)
    rows: list[dict[str, Any]] = []
    totals: dict[str, Any] = {}
    read = skipped = 0
    for _, (batch_rows, batch_totals, batch_read, batch_skipped) in map_batches(
            store_usage_batch, store, spec, threads=threads, executor=executor, batch_size=batch_size,
            options={"prices": table}):
        rows.extend(batch_rows)
        totals = _combine(totals, batch_totals)
        read += batch_read
        skipped += batch_skipped
    return StoreLedger(rows, read, skipped, totals)


async def store_usage_batch(context: BatchContext, thread_ids: Sequence[str]
                            ) -> tuple[list[dict[str, Any]], dict[str, Any], int, int]:
    """The fleet task: (rows per thread, model and state; the batch's totals; threads read; threads skipped)."""
    machine = context.machine
    prices: Prices | None = context.options.get("prices")
    rows: list[dict[str, Any]] = []
    totals: dict[str, Any] = {}
    read_count = skipped = 0
    with without_cyclic_gc():
        async for read in read_threads(context.store, thread_ids):
            if read.error is not None:
                raise AgentError(f"usage could not read thread {read.thread_id!r}: {read.error}",
                                 code="usage-failed", thread_id=read.thread_id)
            entries = read.entries or []
            if not entries or entries[0].get("machineId") != machine.id:
                skipped += 1
                continue
            try:
                states = [step.snapshot for step in fold(machine, entries, check_version=False, errors="record")]
            except Exception as error:
                raise AgentError(f"usage could not fold thread {read.thread_id!r}: {type(error).__name__}: {error}",
                                 code="usage-failed", thread_id=read.thread_id) from error
            read_count += 1
            totals = _combine(totals, get_usage_from_events(entries))
            rows.extend(_thread_rows(read.thread_id, UsageLedger(entries, states.__getitem__, prices=prices).rows()))
    return rows, totals, read_count, skipped


def _thread_rows(thread_id: str, records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    grouped: dict[tuple[str, str | None], dict[str, Any]] = {}
    for record in records:
        key = (str(record["model"]), record["state"])
        row = grouped.get(key)
        if row is None:
            row = grouped[key] = {"thread_id": thread_id, "model": key[0], "state": key[1], "records": 0,
                                  **dict.fromkeys(StoreLedger.TOKENS, 0), "cost": None}
        row["records"] += 1
        total = record.get("totalTokens")
        if not isinstance(total, (int, float)):  # derived as get_usage_from_events derives it
            total = (record.get("inputTokens") or 0) + (record.get("outputTokens") or 0)
        row["totalTokens"] += total
        row["inputTokens"] += record.get("inputTokens") or 0
        row["outputTokens"] += record.get("outputTokens") or 0
        if record.get("cost") is not None:
            row["cost"] = (row["cost"] or 0.0) + record["cost"]
    return list(grouped.values())


class StoreCoverage(Coverage):
    """A store's coverage: `states_entered` {state id: times entered}, `transitions_taken` {transition id:
    times taken}, `to_pandas()` every state and transition of the chart (0 where never reached)."""

    @property
    def states_entered(self) -> dict[str, int]:
        return dict(self.states)

    @property
    def transitions_taken(self) -> dict[str, int]:
        return dict(self.transitions)


def store_coverage(
    store: EventLogStore | str,
    machine: Any,
    *,
    threads: Iterable[str] | None = None,
    executor: concurrent.futures.Executor | None = None,
    batch_size: int | None = None,
) -> StoreCoverage:
    """States entered and transitions taken over every thread of `machine` in `store` (`ex.coverage()`'s rules:
    threads of other machines are skipped; one that cannot be folded stops the count with an error naming it)."""
    if isinstance(threads, str):
        raise AgentError("threads must be an iterable of thread ids, not one str", code="invalid-argument")
    spec = machine_spec(machine)
    ids = None if threads is None else list(threads)
    cov = coverage_of_store(store, spec.machine, thread_ids=ids, executor=executor, batch_size=batch_size)
    return StoreCoverage(cov.definition, cov.states, cov.transitions, cov.runs, cov.entries)
