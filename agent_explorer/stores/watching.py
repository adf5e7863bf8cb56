"""Following a thread as it grows: the loop behind `EventLogStore.watch`, built on `read` alone.

A backend only supplies a `WakeUp` (how a watcher learns that the thread may have grown: a condition,
a cheap poll, LISTEN/NOTIFY); what is yielded always comes from `read`, so every store keeps the same
guarantees. This module never writes, and never holds a read transaction open between reads.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import AgentStoreBusyError, AgentStoreError

if TYPE_CHECKING:
    from .base import EventLogStore

__all__ = [
    "LIST_PAGE", "RETRY_FIRST", "RETRY_MAX", "PollWakeUp", "ThreadLength", "WakeUp", "all_thread_lengths",
    "watch_thread", "watch_threads",
]

RETRY_FIRST = 0.05  # seconds before retrying a read that failed transiently; doubles up to RETRY_MAX
RETRY_MAX = 1.0


class WakeUp:
    """A backend's wake-up hook for one watcher of one thread.

    `wait()` returns once the thread may have grown since the previous `wait()` returned (or since
    `open()`, for the first): a spurious return costs one empty read, a missed one would stall the
    watcher, so a backend errs on the side of waking. `close()` releases what `open()` took; it is
    called exactly once, even when `open()` failed part way.
    """

    async def open(self) -> None:
        """Take what the hook needs (a subscription, a connection); runs before the first read."""

    async def wait(self) -> None:
        raise NotImplementedError

    def progressed(self) -> None:
        """A read just found entries (a polling hook goes back to its shortest interval)."""

    def changed(self) -> set[str] | None:
        """For a whole-store hook: the thread ids that may have changed since the previous call (a signal that names
        them, as PostgreSQL's payload does), or None when unknown, so the store is listed again (the default)."""
        return None

    async def close(self) -> None:
        """Release everything `open()` took; must not raise."""


class PollWakeUp(WakeUp):
    """No signal at all: sleep `low` seconds, growing by half each quiet round up to `high`, and
    back to `low` whenever a read found entries (the loop calls `progressed`)."""

    def __init__(self, low: float = 0.005, high: float = 0.2) -> None:
        self.low, self.high = low, high
        self._interval = low

    def progressed(self) -> None:
        self._interval = self.low

    async def wait(self) -> None:
        await asyncio.sleep(self._interval)
        self._interval = min(self._interval * 1.5, self.high)


async def watch_thread(
    store: EventLogStore, thread_id: str, position: int
) -> AsyncGenerator[list[dict[str, Any]], None]:
    """The generator `EventLogStore.watch` returns (arguments already checked).

    The wake-up hook is opened before the first read, so an append that lands between a read and
    the next wait always wakes the watcher. Each batch is the result of one `read` from the current
    position: a consistent read sees whole appends only, so a batch is one or more whole appends.
    """
    wakeup = store._watch_wakeup(thread_id)
    try:
        await wakeup.open()
        read_once = False
        failing_since: float | None = None
        delay = RETRY_FIRST
        while True:
            try:
                batch = await store.read(thread_id, position)
            except (AgentStoreBusyError, AgentStoreError) as error:
                # Before the first read succeeded, any failure is the caller's to see (a wrong DSN
                # must not look like a slow thread); afterwards, a transient one is waited out.
                budget = store._watch_retry_budget(error) if read_once else None
                now = time.monotonic()
                if failing_since is None:
                    failing_since = now
                if budget is None or now - failing_since > budget:
                    raise
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX)
                continue
            read_once, failing_since, delay = True, None, RETRY_FIRST
            if batch:
                first = batch[0].get("index")
                if first != position:  # a backstop: read() is contiguous by contract
                    raise AgentStoreError(
                        f"{store!r} returned index {first!r} where thread {thread_id!r} continues at {position}; "
                        "the watch stops rather than skip or repeat entries"
                    )
                position += len(batch)
                wakeup.progressed()
                yield batch
            await wakeup.wait()
    finally:
        await wakeup.close()


LIST_PAGE = 100_000
"""Threads per `list_threads` page when a whole store is listed. The SQL stores page by OFFSET over a loose index
scan, so a page costs all the pages before it: 100,000 threads took 9 s in pages of 1,000, 0.3 s in one."""


async def all_thread_lengths(store: EventLogStore) -> dict[str, int]:
    """Every thread of `store` and its length, in the store's thread order (`list_threads` in `LIST_PAGE` pages)."""
    found: dict[str, int] = {}
    while True:
        page = await store.list_threads(limit=LIST_PAGE, offset=len(found))
        found.update((info.thread_id, info.length) for info in page)
        if len(page) < LIST_PAGE:
            return found


class ThreadLength(NamedTuple):
    """A thread that appeared or grew, and its length then (what `watch_threads` yields)."""

    thread_id: str
    length: int


async def watch_threads(
    store: EventLogStore, known: dict[str, int] | None = None
) -> AsyncGenerator[list[ThreadLength], None]:
    """Follow a whole store: batches of the threads that appeared or grew, from `known` (thread -> length).

    One wake-up hook for the store, not one per thread (`store._store_wakeup()`: SQLite's data_version poll,
    PostgreSQL's store channel, a poll elsewhere). On each wake the threads the signal names are read (PostgreSQL's
    payload is the thread id), or, when it names none it is sure of (a poll, a reconnect), the thread list is read
    again and compared; a missed or merged signal costs nothing but a later batch. Opened before the first listing,
    so nothing committed in between is missed. Never yields an empty batch; never writes.
    """
    seen = dict(known or {})
    wakeup = store._store_wakeup()
    try:
        await wakeup.open()
        hint: set[str] | None = None  # the first round lists the store
        while True:
            try:
                if hint is None:
                    lengths = await all_thread_lengths(store)
                else:
                    lengths = {tid: await store.length(tid) for tid in sorted(hint)}
            except (AgentStoreBusyError, AgentStoreError) as error:
                if store._watch_retry_budget(error) is None:
                    raise
                await asyncio.sleep(RETRY_MAX)
                hint = None
                continue
            changed = [ThreadLength(tid, n) for tid, n in lengths.items() if n and seen.get(tid) != n]
            if changed:
                seen.update(changed)
                wakeup.progressed()
                yield changed
            await wakeup.wait()
            hint = wakeup.changed()
    finally:
        await wakeup.close()
