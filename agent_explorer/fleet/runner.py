"""Run one task function over every thread of a store, batch by batch, on any `concurrent.futures.Executor`.

The caller pages thread ids through `list_threads` (never all in memory), cuts them into batches and
submits `run_batch(job)` per batch; a worker process reopens the store from its URL and imports the machine
by its reference (once per process), and runs the task's coroutine on its task loop. Results come back in thread order,
whatever executor ran them and in whatever order they finished. This module schedules nothing itself
(the executor does) and never writes to a store.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import gc
import inspect
import os
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ..errors import AgentError
from ..stores.base import EventLogStore
from .refs import MachineSpec, StoreSpec, machine_spec, store_spec, worker_loop

__all__ = [
    "BatchContext", "FleetJob", "ThreadRead", "map_batches", "read_threads", "run_batch", "without_cyclic_gc",
]

R = TypeVar("R")

PAGE_SIZE = 5000
"""Thread ids listed per `list_threads` call (ids only travel in batches; a page is dropped once cut)."""


@dataclass(frozen=True)
class ThreadRead:
    """One thread as `read_threads` yields it: its entries, or why they could not be read."""

    thread_id: str
    entries: list[dict[str, Any]] | None
    error: BaseException | None = None


@dataclass(frozen=True)
class BatchContext:
    """What a task function gets: the store and machine of this process, and the caller's options."""

    store: EventLogStore
    machine: Any
    options: Mapping[str, Any] = field(default_factory=dict)


BatchTask = Callable[[BatchContext, Sequence[str]], Awaitable[R]]
"""`async def task(context, thread_ids) -> result`, defined at the top level of an importable module."""


@dataclass(frozen=True)
class FleetJob(Generic[R]):
    """Everything one batch needs, small and picklable when the specs are portable."""

    task: BatchTask[R]
    store: StoreSpec
    machine: MachineSpec | None
    thread_ids: tuple[str, ...]
    options: Mapping[str, Any]


def run_batch(job: FleetJob[R]) -> R:
    """The function every executor runs: one batch. In a worker process it runs on the process's task loop
    (where its stores live); with the caller's own objects (a thread pool) on an event loop of its own."""
    context = BatchContext(job.store.open(), job.machine.load() if job.machine is not None else None, job.options)
    coroutine = job.task(context, job.thread_ids)
    if job.store.store is not None:
        return asyncio.run(coroutine)  # type: ignore[arg-type]
    return worker_loop().run(coroutine)  # type: ignore[arg-type]


async def read_threads(store: EventLogStore, thread_ids: Iterable[str]) -> AsyncIterator[ThreadRead]:
    """Each thread's entries in order, reading the next thread while the caller works on this one.

    A thread that cannot be read (an unreachable row, text that no longer parses) is yielded with its
    error instead of stopping the batch.
    """
    ids = iter(thread_ids)

    def start(thread_id: str | None) -> asyncio.Task[list[dict[str, Any]]] | None:
        return None if thread_id is None else asyncio.ensure_future(store.read(thread_id))

    current_id = next(ids, None)
    pending = start(current_id)
    while current_id is not None and pending is not None:
        next_id = next(ids, None)
        upcoming = start(next_id)
        try:
            entries = await pending
        except Exception as error:  # noqa: BLE001 - one bad thread never stops the rest
            yield ThreadRead(current_id, None, error)
        else:
            yield ThreadRead(current_id, entries)
        current_id, pending = next_id, upcoming


async def _thread_ids(store: EventLogStore, threads: Iterable[str] | None) -> AsyncIterator[str]:
    if threads is not None:
        for thread_id in threads:
            yield thread_id
        return
    offset = 0
    while True:
        page = await store.list_threads(limit=PAGE_SIZE, offset=offset)
        for info in page:
            yield info.thread_id
        if len(page) < PAGE_SIZE:
            return
        offset += len(page)


MAX_AUTO_BATCH = 500
"""The largest batch chosen automatically: ~0.2 s of folding for threads of a dozen entries, so a task
outweighs its round trip through a scheduler (Dask sends a worker its next task only when one finishes)."""


def auto_batch_size(known: int, workers: int) -> int:
    """Threads per task when the caller names none: about four tasks per worker over the ids seen so far
    (the first page), so small fleets still spread over every worker, capped at `MAX_AUTO_BATCH`."""
    return max(1, min(MAX_AUTO_BATCH, -(-known // (4 * max(workers, 1)))))


async def _batches(ids: AsyncIterator[str], size: int | None, workers: int) -> AsyncIterator[tuple[str, ...]]:
    if size is None:  # look at up to one page of ids before choosing
        first: list[str] = []
        async for thread_id in ids:
            first.append(thread_id)
            if len(first) >= PAGE_SIZE:
                break
        size = auto_batch_size(len(first), workers)
        for start in range(0, len(first) - len(first) % size, size):
            yield tuple(first[start : start + size])
        batch = first[len(first) - len(first) % size :]
    else:
        batch = []
    async for thread_id in ids:
        batch.append(thread_id)
        if len(batch) >= size:
            yield tuple(batch)
            batch = []
    if batch:
        yield tuple(batch)


def parallelism(executor: concurrent.futures.Executor | None) -> int:
    """How many batches the executor can run at once (Dask: the cluster's threads; pools: max_workers)."""
    if executor is None:
        return 1
    client = getattr(executor, "_client", None)  # distributed.cfexecutor.ClientExecutor
    if client is not None and hasattr(client, "nthreads"):
        try:
            return max(1, int(sum(client.nthreads().values())))
        except Exception:  # noqa: BLE001 - a scheduler that cannot say still gets work
            return os.cpu_count() or 1
    workers = getattr(executor, "_max_workers", None)
    return workers if isinstance(workers, int) and workers > 0 else (os.cpu_count() or 1)


def _in_process(executor: concurrent.futures.Executor | None) -> bool:
    return executor is None or isinstance(executor, concurrent.futures.ThreadPoolExecutor)


async def _drive(
    task: BatchTask[R],
    store: StoreSpec,
    lister: EventLogStore,
    machine: MachineSpec | None,
    threads: Iterable[str] | None,
    executor: concurrent.futures.Executor | None,
    batch_size: int | None,
    options: Mapping[str, Any],
    on_result: Callable[[tuple[str, ...], R], None],
) -> None:
    if executor is None:
        context = BatchContext(lister, machine.machine if machine is not None else None, options)
        # In-process a batch costs nothing extra; 100 threads keeps progress reports frequent.
        async for batch in _batches(_thread_ids(lister, threads), batch_size or 100, 1):
            on_result(batch, await task(context, batch))
        return
    loop = asyncio.get_running_loop()
    workers = parallelism(executor)
    window = 2 * workers + 1  # enough queued that no worker waits, few enough to stay small
    in_flight: collections.deque[tuple[tuple[str, ...], asyncio.Future[R]]] = collections.deque()
    try:
        async for batch in _batches(_thread_ids(lister, threads), batch_size, workers):
            job = FleetJob(task, store, machine, batch, options)
            try:
                submitted = loop.run_in_executor(executor, run_batch, job)
            except Exception as error:  # a pool already broken refuses at submit
                raise _executor_failed(batch, error) from error
            in_flight.append((batch, submitted))
            while len(in_flight) >= window:
                done, future = in_flight.popleft()
                on_result(done, await _outcome(done, future))
        while in_flight:
            done, future = in_flight.popleft()
            on_result(done, await _outcome(done, future))
    finally:
        for _, future in in_flight:
            future.cancel()


async def _outcome(batch: tuple[str, ...], future: asyncio.Future[R]) -> R:
    """A batch's result; an executor's own failure (a broken pool, a worker Dask gave up on) is named."""
    try:
        return await future
    except AgentError:
        raise
    except Exception as error:
        raise _executor_failed(batch, error) from error


def _executor_failed(batch: tuple[str, ...], error: Exception) -> AgentError:
    return AgentError(
        f"the executor failed on the batch of {len(batch)} threads from {batch[0]!r}: {type(error).__name__}: "
        f"{error}",
        code="fleet-task-failed",
    )


def map_batches(
    task: BatchTask[R],
    store: EventLogStore | str,
    machine: Any,
    *,
    threads: Iterable[str] | None = None,
    executor: concurrent.futures.Executor | None = None,
    batch_size: int | None = None,
    options: Mapping[str, Any] | None = None,
) -> Iterator[tuple[tuple[str, ...], R]]:
    """`(thread ids, task result)` per batch, in thread order, however the executor ran them.

    `task` is `async def task(context: BatchContext, thread_ids) -> result` at the top level of an
    importable module (worker processes import it by name). `store` is a store or a store URL; `machine`
    a machine or its 'package.module:attr' (None for a task that folds nothing: `context.machine` is None). With `executor=None` the batches run here, one after the
    other, on the caller's store and machine objects; with a `ThreadPoolExecutor` on the same objects
    in threads; with any other executor (a process pool, Dask's `Client.get_executor()`) each batch goes
    as a `FleetJob` holding the store's URL and the machine's reference. A task that raises stops the
    run (tasks report per-thread problems in their result instead).
    """
    if not _is_top_level(task):
        raise AgentError(
            f"the task {getattr(task, '__qualname__', task)!r} must be an async function defined at the top "
            "level of an importable module, so worker processes can import it",
            code="invalid-argument",
        )
    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1):
        raise AgentError(f"batch_size must be a positive int, got {batch_size!r}", code="invalid-argument")
    # Batches run here (executor None) or in other processes: the copy opened here serves this run's one
    # event loop. A thread pool runs batches on loops of their own, so its store must not be loop-bound.
    spec, owned = store_spec(store, loop_bound=not isinstance(executor, concurrent.futures.ThreadPoolExecutor))
    lister = spec.store
    assert lister is not None
    mspec = machine_spec(machine) if machine is not None else None
    job_store, job_machine = spec, mspec
    if not _in_process(executor):
        job_store, job_machine = spec.portable(), (mspec.portable() if mspec is not None else None)
    results: collections.deque[tuple[tuple[str, ...], R]] = collections.deque()
    # The generator hands results out as the driver produces them: the driver runs on its own thread and
    # event loop, so this works inside Jupyter's running loop too, and memory holds a bounded window.
    ready = threading.Condition()
    finished: list[BaseException | None] = []
    stop = threading.Event()

    def on_result(batch: tuple[str, ...], result: R) -> None:
        with ready:
            while len(results) >= 64 and not stop.is_set():
                ready.wait(0.1)
            results.append((batch, result))
            ready.notify_all()
        if stop.is_set():
            raise _Stopped()

    async def main() -> None:
        try:
            await _drive(task, job_store, lister, job_machine, threads, executor, batch_size, options or {}, on_result)
        finally:
            if owned:
                await lister.aclose()

    def drive() -> None:
        error: BaseException | None = None
        try:
            asyncio.run(main())
        except _Stopped:
            pass
        except BaseException as caught:  # noqa: BLE001 - handed to the consumer, re-raised there
            error = caught
        with ready:
            finished.append(error)
            ready.notify_all()

    worker = threading.Thread(target=drive, name="agent-explorer-fleet", daemon=True)
    worker.start()
    try:
        while True:
            with ready:
                while not results and not finished:
                    ready.wait()
                if results:
                    item = results.popleft()
                    ready.notify_all()
                else:
                    error = finished[0]
                    if error is not None:
                        raise error
                    return
            yield item
    finally:
        stop.set()
        with ready:
            ready.notify_all()
        worker.join()


@contextlib.contextmanager
def without_cyclic_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector for one batch (reference counting still frees everything).

    Entries, snapshots and reports are acyclic trees, so the cyclic collector can free none of them, yet
    it rescans every live object of the process on each full pass: in a Dask worker that is the
    worker's own large heap, once per few thousand allocations. A batch is bounded, so is what waits.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


class _Stopped(Exception):
    """The consumer stopped iterating: the driver winds down."""


def _is_top_level(task: Any) -> bool:
    qualname = getattr(task, "__qualname__", "")
    return inspect.iscoroutinefunction(task) and "<locals>" not in qualname and "." not in qualname
