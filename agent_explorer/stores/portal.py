"""Running store coroutines on a loop thread of their own: the blocking `store.sync` facade and the
PostgreSQL store's dedicated loop.

A `Portal` owns one daemon thread running one event loop; it never touches storage itself.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from .watching import all_thread_lengths

if TYPE_CHECKING:
    from .base import EventLogStore, ThreadHead, ThreadInfo

__all__ = ["Portal", "SyncStore", "run_sync"]

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to its end from synchronous code, also from inside a running event loop (a notebook cell in
    Jupyter, where `asyncio.run` refuses): there it runs on a loop thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    portal = Portal("agent-explorer-run-sync")
    try:
        return portal.run(coro)
    finally:
        portal.close()


class Portal:
    """A daemon thread running an event loop: runs coroutines for synchronous code, or keeps
    loop-bound resources (a connection pool) on one loop whatever loop the caller is on."""

    def __init__(self, name: str = "agent-explorer-store-sync") -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._name = name
        self.closed = False

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule `coro` on the portal's loop (started on first use); never blocks."""
        with self._lock:
            if self.closed:
                coro.close()
                raise RuntimeError("this portal is closed")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self._name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            loop = self._loop
        return asyncio.run_coroutine_threadsafe(coro, loop)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the portal's loop and wait for it (from synchronous code)."""
        return self.submit(coro).result()

    async def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await `coro`, run on the portal's loop, from any other event loop."""
        return await asyncio.wrap_future(self.submit(coro))

    def is_current(self) -> bool:
        return self._thread is threading.current_thread()

    def close(self) -> None:
        if self.is_current():
            return
        with self._lock:
            self.closed = True
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is not None and thread is not None:
            # Cancel what still runs there, so no caller waits forever on a stopped loop.
            try:
                asyncio.run_coroutine_threadsafe(_cancel_others(), loop).result(timeout=30)
            except (concurrent.futures.TimeoutError, RuntimeError):
                pass
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()


async def _cancel_others() -> None:
    tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


class SyncStore:
    """Thin blocking facade over an EventLogStore (see `EventLogStore.sync`)."""

    def __init__(self, store: EventLogStore, portal: Portal) -> None:
        self._store = store
        self._portal = portal

    def append(self, *, thread_id: str, expected_index: int, entries: Sequence[Any]) -> int:
        return self._portal.run(self._store.append(thread_id=thread_id, expected_index=expected_index, entries=entries))

    def read(self, thread_id: str, from_index: int = 0, to_index: int | None = None, *, limit: int | None = None) -> list[dict[str, Any]]:
        return self._portal.run(self._store.read(thread_id, from_index, to_index, limit=limit))

    def read_raw(self, thread_id: str, from_index: int = 0, to_index: int | None = None, *, limit: int | None = None) -> list[str]:
        return self._portal.run(self._store.read_raw(thread_id, from_index, to_index, limit=limit))

    def length(self, thread_id: str) -> int:
        return self._portal.run(self._store.length(thread_id))

    def all_thread_lengths(self) -> dict[str, int]:
        return self._portal.run(all_thread_lengths(self._store))

    def fork(self, *, thread_id: str, new_thread_id: str, up_to_index: int) -> int:
        return self._portal.run(self._store.fork(thread_id=thread_id, new_thread_id=new_thread_id, up_to_index=up_to_index))

    def list_threads(self, *, limit: int = 100, offset: int = 0) -> list[ThreadInfo]:
        return self._portal.run(self._store.list_threads(limit=limit, offset=offset))

    def thread_heads(self, thread_ids: Iterable[str] | None = None) -> list[ThreadHead]:
        return self._portal.run(self._store.thread_heads(thread_ids))

    def close(self) -> None:
        """Close the store (and this facade's loop thread)."""
        self._portal.run(self._store.aclose())
        self._portal.close()
