"""Following a live run: the recording grows as its host appends to the store, and the view keeps up.

Owns `live` (following or not, when the writer last appended, how many entries arrived past the cursor). The
watch (`store.watch`, whole committed appends in order) runs on a thread of its own with its own event loop,
so following works the same in a kernel and in a plain asyncio program, and the caller's loop is never blocked.
Each batch extends the line's one fold (checkpoints, ledger and verification grow; nothing refolds from 0).
Never writes to the store.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar

from ...errors import AgentError
from .base import Handler, Panel, Traits, View

__all__ = ["LivePanel"]


class LivePanel(Panel):
    TRAITS: ClassVar[tuple[str, ...]] = ("live",)

    def __init__(self, view: View, traits: Traits, *, store: Any, thread_id: str | None,
                 grow: Callable[[Sequence[Mapping[str, Any]]], None], jump_to_tail: Callable[[], None]) -> None:
        super().__init__(view, traits)
        self.store = store
        self.thread_id = thread_id
        self._grow = grow  # the explorer's: extend the recording's fold and every view of it, under its lock
        self._jump = jump_to_tail
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = threading.Event()
        self._state: dict[str, Any] = {"following": False, "newEntries": 0, "lastAppendAt": None,
                                       "lastRecordedAt": None, "error": None}
        traits.set("live", {})

    def handlers(self) -> Mapping[str, Handler]:
        return {"follow": self._on_follow, "jump-to-tail": lambda _content: self._jump()}

    @property
    def following(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def follow(self, on: bool = True) -> None:
        if not on:
            self.stop()
            return
        if self.store is None or self.thread_id is None:
            raise AgentError("follow() needs an explorer opened with Explorer.from_store(store, thread_id, machine)",
                             code="invalid-argument")
        if self.following:
            return
        self._stopping.clear()
        start = len(self.view.root.entries)  # catch up on what arrived while not following
        self._thread = threading.Thread(target=self._run, args=(start,), name="agent-explorer-follow", daemon=True)
        self._publish(following=True, error=None)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        thread = self._thread
        if thread is None:
            return
        self._stopping.set()
        loop, task = self._loop, self._task
        if loop is not None and task is not None:
            loop.call_soon_threadsafe(task.cancel)
        if thread is not threading.current_thread():
            thread.join(timeout)
        self._thread = None
        self._publish(following=False)

    def _run(self, start: int) -> None:
        """The follow thread: its own loop, one watch, each batch handed to the explorer in order."""
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            self._task = loop.create_task(self._watch(start))
            loop.run_until_complete(self._task)
        except asyncio.CancelledError:
            pass
        except Exception as error:  # noqa: BLE001 - a thread has no caller: the widget shows what broke
            self._publish(following=False, error=f"{type(error).__name__}: {error}")
        finally:
            self._loop = self._task = None
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _watch(self, start: int) -> None:
        watcher = self.store.watch(self.thread_id, from_index=start)
        try:
            async for batch in watcher:
                if self._stopping.is_set():
                    break
                if batch:
                    self._arrived(batch)
        finally:
            await watcher.aclose()

    def _arrived(self, batch: Sequence[Mapping[str, Any]]) -> None:
        self._grow(batch)
        last = batch[-1]
        self._publish(lastAppendAt=datetime.now(UTC).isoformat(timespec="seconds"),
                      lastRecordedAt=last.get("recordedAt"))

    def new_entries(self, count: int) -> None:
        """How many entries arrived past the cursor (0: the cursor is at the tail, or went there)."""
        self._publish(newEntries=count)

    def _publish(self, **changes: Any) -> None:
        self._state.update(changes)
        self.traits.set("live", dict(self._state))

    def _on_follow(self, content: Mapping[str, Any]) -> None:
        self.follow(bool(content.get("on", True)))
