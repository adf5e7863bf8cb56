"""`verify_store`: replay every thread of a store through one machine, on any executor, and report.

Each thread is checked by `verify_log` (the one fold of verification; nothing here folds by itself). A
thread recorded by another machine id is skipped and counted; a thread that cannot be read or folded is
an error row, and the rest go on. Only reads the store; never executes an action.
"""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..errors import AgentError, AgentMachineVersionMismatchError
from ..eventlog.report_text import run_state
from ..eventlog.verification import verify_log
from ..stores.base import EventLogStore
from .refs import describe_store, machine_spec
from .report import FleetReport, ThreadOutcome
from .runner import BatchContext, ThreadRead, map_batches, read_threads, without_cyclic_gc

__all__ = ["verify_batch", "verify_store", "verify_thread"]

def verify_store(
    store: EventLogStore | str,
    machine: Any,
    *,
    threads: Iterable[str] | None = None,
    executor: concurrent.futures.Executor | None = None,
    ignore_version: bool = False,
    progress: Callable[[int, int | None], None] | None = None,
    strict: bool = False,
    batch_size: int | None = None,
) -> FleetReport:
    """Verify every thread of `store` (a store or a store URL) against `machine`; see `FleetReport`.

    `threads`: the thread ids to check (default: every thread, paged through `list_threads`). `machine`
    is a machine or its 'package.module:attr'. `executor`: None runs here; a `ProcessPoolExecutor` or
    Dask's `Client(address).get_executor()` runs batches of `batch_size` threads in worker processes, which
    reopen the store from its URL and import the machine by its reference (default: about four batches
    per worker over the first page of ids, at most 500 threads each). `ignore_version=True` folds
    threads recorded under another declared version of this machine (what would the new code derive?)
    instead of refusing them. `strict=True` makes an entry without a hash a divergence.
    `progress(threads_done, total)` is called after each batch (`total` is None unless `threads` has a
    length). The report is the same, in thread order, whatever the executor.
    """
    spec = machine_spec(machine)
    total = len(threads) if isinstance(threads, Sequence) else None
    if isinstance(threads, str):
        raise AgentError("threads must be an iterable of thread ids, not one str", code="invalid-argument")
    started = time.perf_counter()
    outcomes: list[ThreadOutcome] = []
    for _, batch_outcomes in map_batches(
        verify_batch,
        store,
        spec,
        threads=threads,
        executor=executor,
        batch_size=batch_size,
        options={"strict": bool(strict), "check_version": not ignore_version},
    ):
        outcomes.extend(batch_outcomes)
        if progress is not None:
            progress(len(outcomes), total)
    return FleetReport.from_outcomes(
        describe_store(store), spec.machine_id, spec.version, outcomes, time.perf_counter() - started
    )


async def verify_batch(context: BatchContext, thread_ids: Sequence[str]) -> list[ThreadOutcome]:
    """The fleet task: verify each thread of the batch (the store reads the next while this one folds)."""
    strict = bool(context.options.get("strict", False))
    check_version = bool(context.options.get("check_version", True))
    with without_cyclic_gc():
        return [
            verify_thread(context.machine, read, strict=strict, check_version=check_version)
            async for read in read_threads(context.store, thread_ids)
        ]


def verify_thread(machine: Any, read: ThreadRead, *, strict: bool = False, check_version: bool = True) -> ThreadOutcome:
    """One thread's outcome; every failure becomes an error row naming what went wrong."""
    thread_id = read.thread_id
    if read.error is not None:
        return ThreadOutcome(thread_id, "error", message=f"could not read the thread: {_describe(read.error)}")
    entries = read.entries or []
    if not entries:
        return ThreadOutcome(thread_id, "error", message="the thread is empty or does not exist")
    first = entries[0]
    recorded_id = first.get("machineId") if isinstance(first, dict) else None
    if recorded_id != machine.id:
        return ThreadOutcome(thread_id, "skipped", machine_id=str(recorded_id), message="recorded by another machine")
    try:
        report = verify_log(machine, entries, strict=strict, check_version=check_version, keep_snapshots=0)
    except AgentMachineVersionMismatchError as error:
        return ThreadOutcome(
            thread_id, "error", entries=len(entries),
            message=("recorded by another version of this machine (ignore_version=True, or --ignore-version, "
                     f"folds it through this one): {_describe(error)}"),
        )
    except Exception as error:  # noqa: BLE001 - one bad thread never stops the rest
        return ThreadOutcome(thread_id, "error", entries=len(entries), message=_describe(error))
    state = run_state(report.final_persisted_snapshot)
    if report.ok:
        return ThreadOutcome(thread_id, "ok", report.entries, report.checked, report.unverified, run_state=state)
    first_divergence = report.divergences[0]
    return ThreadOutcome(
        thread_id, "divergent", report.entries, report.checked, report.unverified,
        divergences=len(report.divergences), index=first_divergence.index, kind=first_divergence.kind,
        event_type=_text_or_none(first_divergence.event_type), event_id=_text_or_none(first_divergence.event_id),
        message=first_divergence.message, run_state=state,
    )


def _describe(error: BaseException) -> str:
    if isinstance(error, AgentError):
        return f"[{error.code}] {error.message}"
    return f"{type(error).__name__}: {error}"


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)
