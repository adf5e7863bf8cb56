"""`summarize_runs`: one run list row per thread of a store, folded on the fleet path (any executor).

With a cache that holds records, this process first matches the store against it in bulk: one `thread_heads`
query (each thread's length and the digest of its last entry's text) and one read of the cache file; a thread
whose length and digest are its record's is served from the record without reading it. Every other thread goes,
batch by batch, to `summarize_batch` (in-process, a process pool or Dask, through `fleet.map_batches`): a worker
serves a thread whose length, last entry id and hash match its cached carry without folding (a tail read),
folds a grown thread on from its cached persisted snapshot (after tying that snapshot to the hash recorded on
the entry it stands for), and folds every other thread from its init entry. Only this process writes the cache;
nothing is ever written to the store.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import AgentError
from ..explorer.prices import Prices
from ..fleet.refs import MachineSpec, machine_spec, store_spec
from ..fleet.runner import PAGE_SIZE, BatchContext, map_batches, read_threads, without_cyclic_gc
from ..stores.base import EventLogStore, ThreadHead, check_thread_id
from ..stores.portal import run_sync
from .cache import Record, SummaryCache, payload, served_row, snapshot_of
from .row import Carry, RunSummary, describe, row_from_carry, summarize_thread, tied, unchanged, unreadable_row
from .summaries import RunSummaries

__all__ = ["BatchRows", "count_threads", "iter_run_batches", "summarize_batch", "summarize_runs"]

Progress = Callable[[int, "int | None"], None]


@dataclass(frozen=True)
class BatchRows:
    """One batch as a worker returns it: rows in thread order, cache records to write, entries folded, rows
    served whole from the cache."""

    rows: list[RunSummary]
    records: list[Record]
    folded: int
    cached: int


SERVED_CHUNK = 1000
"""Rows per batch handed out when most are served from the cache (a batch is a progress report and a list update
in the run list widget; a hundred of them for 100,000 threads)."""


def _prices(prices: Prices | Mapping[str, Mapping[str, float]] | None) -> Prices | None:
    if prices is None or isinstance(prices, Prices):
        return prices
    return Prices(prices)


def iter_run_batches(
    store: EventLogStore | str,
    machine: Any,
    *,
    threads: Iterable[str] | None = None,
    executor: concurrent.futures.Executor | None = None,
    prices: Prices | Mapping[str, Mapping[str, float]] | None = None,
    cache: bool = True,
    batch_size: int | None = None,
) -> Iterator[BatchRows]:
    """The rows batch by batch, in thread order, as they are folded (a run list shows the first page at once:
    pass its threads first, or read the first batch). The cache is written batch by batch as they arrive."""
    if isinstance(threads, str):
        raise AgentError("threads must be an iterable of thread ids, not one str", code="invalid-argument")
    spec = machine_spec(machine)
    table = _prices(prices)
    summary_cache = SummaryCache.for_run(store, spec.machine) if cache else None
    options = {"prices": table, "cache": summary_cache.reader() if summary_cache is not None else None}
    ids = None if threads is None else list(threads)
    try:
        matched = None
        opened: EventLogStore | None = None
        if summary_cache is not None and summary_cache.has_records(ids):
            if isinstance(store, str):  # opened once for the heads and the folds (not once each)
                located, _ = store_spec(store, loop_bound=False)
                assert located.store is not None
                opened = store = located.store
            with without_cyclic_gc():  # 100,000 rows and records: the collector would rescan them all, often
                matched = _serve_unchanged(store, ids, summary_cache, table)
        if matched is None:  # a first look (or heads that could not be read): every thread to the workers
            for _, batch in _folded(store, spec, ids, executor, batch_size, options):
                if summary_cache is not None and batch.records:
                    summary_cache.store(batch.records)
                yield batch
            return
        assert summary_cache is not None
        order, served, gaps = matched
        misses = [thread_id for thread_id in order if thread_id not in served]
        results = _folded(store, spec, misses, executor, batch_size, {**options, "gaps": gaps}) if misses else None
        try:
            yield from _merged(order, served, results or iter(()), summary_cache, max(batch_size or 0, SERVED_CHUNK))
        finally:
            close = getattr(results, "close", None)
            if close is not None:
                close()  # a consumer that stopped early stops the workers too
    finally:
        if summary_cache is not None:
            summary_cache.close()
        if opened is not None:
            run_sync(opened.aclose())


def _folded(store: EventLogStore | str, spec: MachineSpec, ids: list[str] | None,
            executor: concurrent.futures.Executor | None, batch_size: int | None, options: Mapping[str, Any]
            ) -> Iterator[tuple[tuple[str, ...], BatchRows]]:
    """`map_batches(summarize_batch, ...)`, except that a few threads folded here (one batch's worth, as a followed
    run list folds a thread that grew) run in this thread: no driver thread to start and hand rows back through,
    which under a loaded machine's scheduling costs more than the fold."""
    if executor is not None or ids is None or batch_size is not None or len(ids) > IN_PROCESS_BATCH:
        return map_batches(summarize_batch, store, spec, threads=ids, executor=executor, batch_size=batch_size,
                           options=options)
    return _fold_here(store, spec, ids, options)


def _fold_here(store: EventLogStore | str, spec: MachineSpec, ids: list[str], options: Mapping[str, Any]
               ) -> Iterator[tuple[tuple[str, ...], BatchRows]]:
    if not ids:
        return
    located, owned = store_spec(store, loop_bound=True)
    reader = located.store
    assert reader is not None

    async def fold() -> BatchRows:
        try:
            return await summarize_batch(BatchContext(reader, spec.machine, options), ids)
        finally:
            if owned:
                await reader.aclose()

    yield tuple(ids), run_sync(fold())


IN_PROCESS_BATCH = 100
"""Threads per batch folded in this process (`map_batches`' own size there)."""


def _serve_unchanged(store: EventLogStore | str, ids: list[str] | None, summary_cache: SummaryCache,
                     prices: Prices | None) -> tuple[list[str], dict[str, RunSummary], frozenset[str]] | None:
    """(every thread in order, the rows served from the cache, the threads with rows missing under their head): a
    thread whose head (length, rows held, digest of its last entry's text) is its record's, and whose record
    checks, is served; None when the heads cannot be read (every thread is then folded or tail-read as on a first
    look). A thread with a gap is read whole, where the gap makes it unreadable."""
    wanted = None if ids is None else [thread_id for thread_id in dict.fromkeys(ids) if _is_thread_id(thread_id)]
    # One after the other: checking records is Python, and a thread doing it beside the store's reader would
    # make that reader wait for the GIL at every row (measured: 5 s instead of 2.7 s at 100,000 threads).
    heads = _read_heads(store, wanted)
    if heads is None:
        return None
    records = summary_cache.keyed(wanted)
    served: dict[str, RunSummary] = {}
    gaps = frozenset(head.thread_id for head in heads if head.rows != head.length)
    for head in heads:
        record = records.get(head.thread_id)  # its key columns first: a thread that changed is not parsed
        if record is None or record[0] != head.length or record[1] != head.digest or head.thread_id in gaps:
            continue
        found = served_row(head.thread_id, record, prices)  # then the record itself is checked whole
        if found is not None:
            served[head.thread_id] = found[2]
    order = [head.thread_id for head in heads] if ids is None else list(dict.fromkeys(ids))
    return order, served, gaps


def _is_thread_id(thread_id: object) -> bool:
    try:
        check_thread_id(thread_id)
    except AgentError:
        return False  # read with the rest, where it becomes an unreadable row
    return True


def _read_heads(store: EventLogStore | str, ids: list[str] | None) -> list[ThreadHead] | None:
    spec, owned = store_spec(store, loop_bound=True)
    reader = spec.store
    assert reader is not None

    async def read() -> list[ThreadHead] | None:
        try:
            return await reader.thread_heads(ids)
        except AgentError:
            return None
        finally:
            if owned:
                await reader.aclose()

    return run_sync(read())


def _merged(order: list[str], served: Mapping[str, RunSummary], results: Iterator[tuple[Any, BatchRows]],
            summary_cache: SummaryCache, size: int) -> Iterator[BatchRows]:
    """Served rows and folded ones, merged back into thread order, `size` rows a batch (the folded ones arrive
    in the order of `order` too, so a batch waits only for its own)."""
    pending: dict[str, RunSummary] = {}
    for start in range(0, len(order), size):
        rows: list[RunSummary] = []
        records: list[Record] = []
        folded = cached = 0
        for thread_id in order[start : start + size]:
            row = served.get(thread_id)
            if row is not None:
                rows.append(row)
                cached += 1
                continue
            while thread_id not in pending:
                arrived = next(results, None)
                if arrived is None:
                    raise AgentError(f"no row came back for thread {thread_id!r}", code="fleet-task-failed")
                batch = arrived[1]
                pending.update((got.thread_id, got) for got in batch.rows)
                folded, cached = folded + batch.folded, cached + batch.cached
                records.extend(batch.records)
            rows.append(pending.pop(thread_id))
        if records:
            summary_cache.store(records)
        yield BatchRows(rows, records, folded, cached)


def summarize_runs(
    store: EventLogStore | str,
    machine: Any,
    *,
    threads: Iterable[str] | None = None,
    executor: concurrent.futures.Executor | None = None,
    prices: Prices | Mapping[str, Mapping[str, float]] | None = None,
    progress: Progress | None = None,
    on_rows: Callable[[list[RunSummary]], None] | None = None,
    cache: bool = True,
    batch_size: int | None = None,
) -> RunSummaries:
    """One row per thread of `store` (a store or a store URL), folded through `machine` (a machine or its
    'package.module:attr'); see docs/api.md §8 for the columns and statuses.

    `threads`: the thread ids (default: every thread, paged). `executor`: None folds here; a process pool or
    Dask's `Client.get_executor()` folds batches in workers (as `verify_store`). `prices`: USD per million
    tokens per model (`cost_usd` is NaN without). `progress(threads_done, total)` after each batch (`total`
    the store's thread count, counted first, or `len(threads)`; None for an iterator); `on_rows(rows)` with each
    batch's rows as they arrive. `cache=False` folds everything and neither reads nor writes the per-user cache.
    """
    total = len(threads) if isinstance(threads, Sequence) and not isinstance(threads, str) else None
    if total is None and threads is None and progress is not None:
        total = count_threads(store)
    summaries = RunSummaries()
    for batch in iter_run_batches(store, machine, threads=threads, executor=executor, prices=prices, cache=cache,
                                  batch_size=batch_size):
        summaries.extend(batch.rows)
        summaries.folded += batch.folded
        summaries.cached += batch.cached
        if on_rows is not None:
            on_rows(batch.rows)
        if progress is not None:
            progress(len(summaries), total)
    return summaries


def count_threads(store: EventLogStore | str) -> int:
    """How many threads the store holds (ids paged through `list_threads`, as the fleet pages them)."""
    spec, owned = store_spec(store, loop_bound=True)
    lister = spec.store
    assert lister is not None

    async def count() -> int:
        total = offset = 0
        try:
            while True:
                page = await lister.list_threads(limit=PAGE_SIZE, offset=offset)
                total, offset = total + len(page), offset + len(page)
                if len(page) < PAGE_SIZE:
                    return total
        finally:
            if owned:
                await lister.aclose()

    return run_sync(count())


async def summarize_batch(context: BatchContext, thread_ids: Sequence[str]) -> BatchRows:
    """The fleet task: the batch's rows, from the cache where the thread is unchanged, else folded."""
    machine = context.machine
    prices: Prices | None = context.options.get("prices")
    caching = context.options.get("cache") is not None
    reader = SummaryCache.open_reader(context.options.get("cache"))
    whole: list[str] = []
    try:
        cached = reader.lookup(thread_ids) if reader is not None else {}
        for thread_id in context.options.get("gaps") or ():  # rows missing under its head: never from a tail
            cached.pop(thread_id, None)
    finally:
        if reader is not None:
            reader.close()
    rows: dict[str, RunSummary] = {}
    records: list[Record] = []
    folded = served = 0
    tails = await _read_tails(context.store, cached)
    with without_cyclic_gc():
        for thread_id in thread_ids:
            hit = cached.get(thread_id)
            tail = tails.get(thread_id)
            if hit is None or tail is None:  # not cached, or its tail could not be read: read whole below
                whole.append(thread_id)
                continue
            carry, row, snapshot = hit
            if len(tail) == 1 and unchanged(carry, tail[0]):
                rows[thread_id] = row_from_carry(thread_id, carry, row, prices)
                served += 1
            elif len(tail) > 1 and snapshot_of(carry, snapshot) is not None and tied(carry, tail[0]):
                try:
                    result = summarize_thread(machine, thread_id, tail[1:], prices, carry)
                except Exception as error:  # noqa: BLE001 - one bad thread never stops the rest
                    rows[thread_id] = unreadable_row(thread_id, describe(error))
                    continue
                rows[thread_id] = result.row
                folded += result.folded
                if caching and result.carry is not None:
                    records.append(payload(thread_id, result.carry, _row_fields(result.row)))
            else:
                whole.append(thread_id)
        async for read in read_threads(context.store, whole):
            if read.error is not None:
                rows[read.thread_id] = unreadable_row(read.thread_id, f"could not read the thread: {describe(read.error)}")
                continue
            try:
                result = summarize_thread(machine, read.thread_id, read.entries or [], prices)
            except Exception as error:  # noqa: BLE001 - one bad thread never stops the rest
                rows[read.thread_id] = unreadable_row(read.thread_id, describe(error), len(read.entries or []))
                continue
            rows[read.thread_id] = result.row
            folded += result.folded
            if caching and result.carry is not None:
                records.append(payload(read.thread_id, result.carry, _row_fields(result.row)))
    return BatchRows([rows[thread_id] for thread_id in thread_ids], records, folded, served)


TAIL_READS = 32
"""Tail reads in flight at once: the store's worker (a SQLite thread, a small PostgreSQL pool) runs them back
to back instead of waking the event loop between each."""


async def _read_tails(store: EventLogStore, cached: Mapping[str, tuple[Carry, Any, bytes]]) -> dict[str, list[dict[str, Any]]]:
    """Each cached thread's entries from its cached last one on (None when the read failed)."""
    ids = list(cached)
    tails: dict[str, list[dict[str, Any]]] = {}
    for start in range(0, len(ids), TAIL_READS):
        chunk = ids[start : start + TAIL_READS]
        results = await asyncio.gather(
            *(store.read(thread_id, from_index=cached[thread_id][0].length - 1) for thread_id in chunk),
            return_exceptions=True,
        )
        for thread_id, result in zip(chunk, results, strict=True):
            if isinstance(result, list):
                tails[thread_id] = result
    return tails


def _row_fields(row: RunSummary) -> dict[str, Any]:
    """What a served row takes from the cache beyond the carry (the rest is the carry's, or priced anew)."""
    return {"state": row.state, "status": row.status, "owed": row.owed, "verified": row.verified,
            "total_tokens": row.total_tokens, "value": row.value}
