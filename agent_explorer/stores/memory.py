"""The in-memory event-log store: the reference semantics every other store is checked against.

Holds each thread as a list of validated JSON texts in this process; never persists anything, and
never shares a mutable object with callers (reads parse fresh dicts).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import AgentEventLogConflictError
from .base import (
    EventLogStore,
    PreparedEntry,
    ThreadHead,
    ThreadInfo,
    check_fork,
    check_fork_range,
    check_page,
    check_read,
    check_thread_id,
    check_thread_ids,
    duplicate_id_error,
    head_digest,
    prepare_batch,
)
from .watching import WakeUp

__all__ = ["InMemoryEventLogStore", "create_in_memory_event_log_store"]


class _Thread:
    __slots__ = ("texts", "ids", "id_list")

    def __init__(self, texts: list[str] | None = None, id_list: list[str] | None = None) -> None:
        self.texts: list[str] = texts or []
        self.id_list: list[str] = id_list or []
        self.ids: set[str] = set(self.id_list)


class _Subscription(WakeUp):
    """One watcher's wake-up: the commit (on whatever thread or loop it runs) sets an asyncio.Event
    on the watcher's own loop, thread-safely."""

    def __init__(self, store: InMemoryEventLogStore, thread_id: str) -> None:
        self._store, self._thread_id = store, thread_id
        self._event = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None

    async def open(self) -> None:
        self._loop = asyncio.get_running_loop()
        with self._store._lock:
            self._store._watchers.setdefault(self._thread_id, set()).add(self)

    def notify(self) -> None:
        """Called with the store's lock held, right after a commit to the watched thread."""
        loop = self._loop
        if loop is None:
            return
        try:
            loop.call_soon_threadsafe(self._event.set)
        except RuntimeError:  # the watcher's loop is closed: it will never wait again
            pass

    async def wait(self) -> None:
        await self._event.wait()
        self._event.clear()  # before the read that follows: a later commit sets it again

    async def close(self) -> None:
        with self._store._lock:
            watchers = self._store._watchers.get(self._thread_id)
            if watchers is not None:
                watchers.discard(self)
                if not watchers:
                    del self._store._watchers[self._thread_id]
        self._loop = None


class InMemoryEventLogStore(EventLogStore):
    """Reference store. Each operation's check-and-commit runs without yielding to the event loop
    (and under a lock, for callers on other threads), so concurrent tasks see one total order.

    `watch` wakes on the commit itself: an append from any thread or event loop notifies the
    watchers of its thread before `append` returns.
    """

    def __init__(self) -> None:
        self._threads: dict[str, _Thread] = {}
        self._lock = threading.Lock()
        self._watchers: dict[str, set[_Subscription]] = {}

    def _watch_wakeup(self, thread_id: str) -> WakeUp:
        return _Subscription(self, thread_id)

    def _notify(self, thread_id: str) -> None:
        for watcher in self._watchers.get(thread_id, ()):
            watcher.notify()

    async def append(self, *, thread_id: str, expected_index: int, entries: Sequence[Any]) -> int:
        thread_id, expected_index, prepared = prepare_batch(thread_id, expected_index, entries)
        # Yield once, as a real store would on I/O, so concurrent appenders genuinely interleave.
        await asyncio.sleep(0)
        with self._lock:
            return self._commit(thread_id, expected_index, prepared)

    def _commit(self, thread_id: str, expected_index: int, prepared: list[PreparedEntry]) -> int:
        thread = self._threads.get(thread_id)
        length = len(thread.texts) if thread else 0
        if expected_index != length:
            raise AgentEventLogConflictError(thread_id, expected_index, length)
        if not prepared:
            return length
        if thread is None:
            thread = self._threads[thread_id] = _Thread()
        for entry in prepared:
            if entry.id in thread.ids:
                raise duplicate_id_error(thread_id, entry.id, entry.index)
        thread.texts.extend(entry.text for entry in prepared)
        thread.id_list.extend(entry.id for entry in prepared)
        thread.ids.update(entry.id for entry in prepared)
        if self._watchers:
            self._notify(thread_id)
        return len(thread.texts)

    async def read_raw(
        self, thread_id: str, from_index: int = 0, to_index: int | None = None, *, limit: int | None = None
    ) -> list[str]:
        thread_id, start, stop = check_read(thread_id, from_index, to_index, limit)
        with self._lock:
            thread = self._threads.get(thread_id)
            return thread.texts[start:stop] if thread else []

    async def length(self, thread_id: str) -> int:
        thread_id = check_thread_id(thread_id)
        with self._lock:
            thread = self._threads.get(thread_id)
            return len(thread.texts) if thread else 0

    async def fork(self, *, thread_id: str, new_thread_id: str, up_to_index: int) -> int:
        thread_id, new_thread_id, up_to_index = check_fork(thread_id, new_thread_id, up_to_index)
        await asyncio.sleep(0)
        with self._lock:
            source = self._threads.get(thread_id)
            check_fork_range(thread_id, up_to_index, len(source.texts) if source else 0)
            assert source is not None  # a missing thread has length 0, which no fork range admits
            target = self._threads.get(new_thread_id)
            if target is not None and target.texts:
                raise AgentEventLogConflictError(new_thread_id, 0, len(target.texts))
            self._threads[new_thread_id] = _Thread(source.texts[:up_to_index], source.id_list[:up_to_index])
            if self._watchers:
                self._notify(new_thread_id)
            return up_to_index

    async def list_threads(self, *, limit: int = 100, offset: int = 0) -> list[ThreadInfo]:
        limit, offset = check_page(limit, offset)
        with self._lock:
            names = sorted(name for name, thread in self._threads.items() if thread.texts)
            return [ThreadInfo(name, len(self._threads[name].texts)) for name in names[offset : offset + limit]]

    async def thread_heads(self, thread_ids: Iterable[str] | None = None) -> list[ThreadHead]:
        wanted = None if thread_ids is None else check_thread_ids(thread_ids)
        with self._lock:
            names = sorted(self._threads) if wanted is None else wanted
            heads = [(name, thread.texts[-1], len(thread.texts)) for name in names
                     if (thread := self._threads.get(name)) is not None and thread.texts]
        return [ThreadHead(name, length, length, head_digest(text)) for name, text, length in heads]


def create_in_memory_event_log_store() -> InMemoryEventLogStore:
    """A fresh, empty reference store (the baseline of `assert_event_log_store_conformance`)."""
    return InMemoryEventLogStore()
