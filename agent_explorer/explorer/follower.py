"""Following a live run: the recording grows as its host appends to the store, and the views keep up.

The session's follower. The watch (`store.watch`, whole committed appends in order) runs on a thread of its own
with its own event loop, so following works the same in a kernel and in a plain asyncio program, and the caller's
loop is never blocked. Each batch extends the line's one fold at once (checkpoints, ledger and verification grow;
nothing refolds from 0), so `len(ex)` and `ex.usage()` have it; the views catch up once per refresh (the
session's `grew`), and a front end that acknowledges each refresh it drew (`live-drawn`) gets the next one only
then, so a writer faster than the browser can draw merges batches instead of queueing them. What it says of the
run (`LiveChanged`) the live panel draws. Never writes to the store.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..errors import AgentError
from .events import CursorMoved, LiveChanged
from .protocol import LiveView

if TYPE_CHECKING:
    from .session import Session

__all__ = ["ACK_TIMEOUT", "IN_FLIGHT", "Follower"]

IN_FLIGHT = 2
"""Refreshes a front end may have to draw at once: one being drawn and one waiting keeps the browser busy without a
queue (a third waits, merging whatever arrives meanwhile, until the oldest is acknowledged)."""
ACK_TIMEOUT = 0.5
"""Seconds a refresh waits for the front end's acknowledgement before it counts as drawn anyway (no view on
screen any more, or a kernel busy in a cell, which reads the acknowledgements only afterwards): the views then
still refresh, IN_FLIGHT times per ACK_TIMEOUT. A widget no front end ever acknowledged refreshes at once."""


class Follower:
    """The follow thread of one session, and what it says of the live run."""

    def __init__(self, session: Session) -> None:
        self.session = session
        root = session.root
        self._shown = len(root.entries)  # how much of the recording the views show (a followed run grows first)
        self._arrived_past_cursor = 0
        timeline = root.timeline
        self._divergent_count = len(timeline.verification.divergences) if timeline.verifies else 0  # seen so far
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = threading.Event()
        self.state: LiveView = {"following": False, "newEntries": 0, "lastAppendAt": None, "lastRecordedAt": None,
                                "error": None, "seq": 0}
        # Flow control (the follow thread's): a refresh is owed; the newest acknowledged; the front end acknowledges.
        self._owed = False
        self._acked = 0
        self._acking = False
        self._last: tuple[str, Any] | None = None  # (when the newest batch arrived, its last recordedAt)
        session.subscribe(CursorMoved, self._at_tail)

    # -- the recording's growth (the fold on the follow thread, the views through the session) --------------

    def _grow(self, batch: Sequence[Mapping[str, Any]]) -> bool:
        """A batch of whole committed appends arrived for the recording: folded (and hash-checked) now. True when
        it diverged: that is shown at once."""
        session = self.session
        timeline = session.root.timeline
        with session.lock:
            # Version-checked; folded and verified now (extend folds a caught-up line), else by the background
            # fold, which folds to the end, this batch included.
            timeline.extend(batch)
            if session.line is session.root and session.usage is not None:
                session.usage.grown()
            divergent = len(timeline.verification.divergences) if timeline.verifies else 0
            diverged, self._divergent_count = divergent > self._divergent_count, divergent
        return diverged

    def _show(self) -> None:
        """Every view catches up with the recording's growth since it last did: at the tail the cursor moves to
        the new tail, anywhere else it stays and the entries past it are counted."""
        session = self.session
        with session.lock:
            shown, length = self._shown, len(session.root.entries)
            self._shown = length
            if length == shown or session.line is not session.root:
                return  # nothing new, or a branch is on view (checking the recording out shows all of it)
            at_tail = session.index >= shown - 1
            if not at_tail:
                self._arrived_past_cursor += length - shown
                self._publish(newEntries=self._arrived_past_cursor)
            session.grew(length - 1 if at_tail else None)

    def jump_to_tail(self) -> None:
        session = self.session
        with session.lock:
            if session.line is not session.root:
                session.show(session.root)  # the live line is the recording: view it, at its last entry
            else:
                self._show()  # the tail the views show is the newest one
                session.goto(len(session.entries) - 1)

    def _at_tail(self, moved: CursorMoved) -> None:
        """The cursor moved: at the tail, no entries are past it any more."""
        if self._arrived_past_cursor and moved.index >= min(self._shown, len(self.session.entries)) - 1:
            self._arrived_past_cursor = 0
            self._publish(newEntries=0)

    # -- the follow thread -----------------------------------------------------------------------------------

    @property
    def following(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def follow(self, on: bool = True) -> None:
        if not on:
            self.stop()
            return
        session = self.session
        if session.store is None or session.thread_id is None:
            raise AgentError("follow() needs an explorer opened with Explorer.from_store(store, thread_id, machine)",
                             code="invalid-argument")
        if self.following:
            return
        self._stopping.clear()
        self._acked = self.state["seq"]  # a refresh the last follow sent is not waited for
        start = len(session.root.entries)  # catch up on what arrived while not following
        self._thread = threading.Thread(target=self._run, args=(start,), name="agent-explorer-follow", daemon=True)
        self._publish(following=True, error=None)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop following: the thread shows what it folded, and ends before this returns (never call it holding the
        session's lock, which that last refresh needs)."""
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
        """The follow thread: its own loop, one watch, each batch folded in order."""
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
        session = self.session
        watcher = session.store.watch(session.thread_id, from_index=start)
        try:
            async for batch in watcher:
                if self._stopping.is_set():
                    break
                if batch:
                    self._arrived(batch)
        finally:
            await watcher.aclose()
            self._refresh(now=True)  # what was folded is shown, whatever the front end has to draw

    def _arrived(self, batch: Sequence[Mapping[str, Any]]) -> None:
        diverged = self._grow(batch)
        self._last = (datetime.now(UTC).isoformat(timespec="milliseconds"), batch[-1].get("recordedAt"))
        self._owed = True
        self._refresh(now=diverged)  # a divergence is shown at once, however much the front end has to draw

    def _refresh(self, *, now: bool = False) -> None:
        """The views catch up with the fold, then `live` says so (its `seq` is what the front end acknowledges
        once drawn)."""
        if not self._owed or (not now and self._acking and self.state["seq"] - self._acked >= IN_FLIGHT):
            return  # nothing new, or the front end has enough to draw: an acknowledgement sends it
        self._owed = False
        when, recorded = self._last or (None, None)
        with self.session.lock:
            self._show()
            seq = self.state["seq"] + 1
            self._publish(lastAppendAt=when, lastRecordedAt=recorded, seq=seq)
        if self._acking and self._loop is not None:
            self._loop.call_later(ACK_TIMEOUT, self._ack_overdue, seq)

    def drawn(self, seq: int) -> None:
        """A view drew refresh `seq` (the kernel's thread): the next one may go, from the follow thread."""
        loop = self._loop
        if loop is not None:
            loop.call_soon_threadsafe(self._drawn, seq)

    def _drawn(self, seq: int) -> None:
        self._acking = True
        self._acked = max(self._acked, seq)
        self._refresh()

    def _ack_overdue(self, seq: int) -> None:
        if self._acked < seq:  # not acknowledged in time: count it drawn, so the views keep refreshing
            self._acked = seq
            self._refresh()

    def _publish(self, **changes: Any) -> None:
        with self.session.lock:
            self.state.update(changes)  # type: ignore[typeddict-item]
            self.session.publish(LiveChanged(LiveView(**self.state)))
