"""The explorer's mediator: the one lock, the line on view, the cursor, and the typed events its panels trade.

Panels never call each other or the widget: each gets the session and its own `Traits`, subscribes to the events
it reacts to, and asks the session for what it wants done (show this line at this index, the line grew, put the
cursor here). Delivery is run-to-completion, as a statechart's: an event published while another is delivered
waits until every subscriber has had the first, so what a panel re-publishes (the verification's
`DivergenceFound`) reaches the others after the event that caused it, and the order panels were built in never
matters (tests/explorer/test_session.py builds them in reverse and gets the same traitlets). Subscribers read
the session, never another panel. Every delivery and every traitlet write happens under the one lock; the
browser hears of them on the kernel's loop (hop.py). The session also owns the threads: the background fold of a
long recording, and the follower of a live one (follower.py).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

from .branches import Branch
from .events import CursorMoved, FoldEnded, FoldProgressed, IndexesReady, LineChanged, LineGrew, Opened
from .follower import Follower
from .hop import KernelHop
from .prices import Prices
from .recording import RecordingView
from .table import EventTable
from .usage import UsageIndex
from .verification import compare_recording

__all__ = ["Session"]


E = TypeVar("E")


class Session:
    """One explorer's state and the one lock over it. `widget` only holds the traitlets (`write` sets them)."""

    def __init__(self, widget: Any, machine: Any, root: Branch, *, hop: KernelHop, usage: UsageIndex | None,
                 page_size: int = 100, prices: Prices | None = None, store: Any = None, thread_id: str | None = None,
                 compare_with: Any = None, lazy: bool = False) -> None:
        self.hop = hop
        self.lock = hop.lock
        self._widget = widget
        self.machine = machine
        self.definition: Mapping[str, Any] = machine.definition
        self.prices = prices if prices is not None else Prices(None)
        self.page_size = page_size
        self.store = store
        self.thread_id = thread_id
        self.compare_with = compare_with
        self.recording = RecordingView(machine, root.entries, compare_with)  # the recorded side of divergences
        self.lazy = lazy
        self.root = root
        self.line = root
        self.usage = usage  # None while a long log's background thread builds it
        self.table = EventTable(root.entries)
        self.index = 0
        self._subscribers: dict[type, list[Callable[[Any], None]]] = {}
        self._queue: deque[object] = deque()
        self._delivering = False
        self._wanted: int | None = None  # the newest index of a burst of slider moves, drawn on the next loop turn
        self.folder: threading.Thread | None = None
        self.follower = Follower(self)
        widget.observe(self._index_changed, "index")

    def _index_changed(self, change: Any) -> None:
        # ipywidgets applies a browser's update with the traitlet in its `_property_lock`.
        self.moved(change["new"], from_browser="index" in getattr(self._widget, "_property_lock", {}))

    # -- events ------------------------------------------------------------------------------------------------

    def subscribe(self, kind: type[E], handler: Callable[[E], None]) -> None:
        self._subscribers.setdefault(kind, []).append(handler)

    def publish(self, event: object) -> None:
        """Deliver `event` to its subscribers, run-to-completion: published during a delivery, it waits its turn."""
        with self.lock:
            self._queue.append(event)
            if self._delivering:
                return
            self._delivering = True
            try:
                while self._queue:
                    current = self._queue.popleft()
                    for handler in self._subscribers.get(type(current), ()):
                        handler(current)
            finally:
                self._delivering = False
                self._queue.clear()  # a handler raised: what it queued is not delivered after the error

    # -- traitlets -------------------------------------------------------------------------------------------

    def write(self, name: str, value: Any) -> None:
        """The one place a traitlet is written: its Python value now, its message to the browser through the hop."""
        with self.lock:
            setattr(self._widget, name, value)

    def read(self, name: str) -> Any:
        return getattr(self._widget, name)

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Several writes, one message to the browser (ipywidgets' `hold_sync`), no other thread's write inside."""
        with self.lock, self._widget.hold_sync():
            yield

    # -- the line on view --------------------------------------------------------------------------------------

    @property
    def entries(self) -> list[Mapping[str, Any]]:
        return self.line.entries

    def lines(self) -> list[Branch]:
        return [self.root, *self.root.descendants()]

    def show(self, line: Branch, at: int | None = None) -> Branch:
        """View `line` with the cursor at `at` (default: its last entry). The line already on view is not switched:
        it may have grown (the composer appended to it), so its views catch up and keep their page and hits."""
        with self.lock:
            target = len(line.entries) - 1 if at is None else at
            if line is self.line:
                self.grew(target)
                return line
            self.line = line
            self.usage = UsageIndex(line.entries)
            self.table = EventTable(line.entries)
            self.publish(LineChanged(line))
            self.goto(target)
        return line

    def grew(self, at: int | None = None) -> None:
        """The line on view has more entries than its views show; `at`: where the cursor goes (None: it stays)."""
        with self.lock:
            if self.usage is not None:
                self.usage.grown()  # idempotent: a followed batch was indexed as it arrived
            self.publish(LineGrew(self.line))
            if at is not None:
                self.goto(at)

    # -- the cursor ----------------------------------------------------------------------------------------------

    def clamp(self, value: int) -> int:
        return max(0, min(int(value), max(0, len(self.line.entries) - 1)))

    def goto(self, index: int) -> None:
        """Put the cursor at `index` and draw it (drawn again where it is, if it is there already)."""
        with self.lock:
            self.index = self.clamp(index)
            self._wanted = None
            self.publish(CursorMoved(self.index))

    def moved(self, index: int, *, from_browser: bool) -> None:
        """The `index` traitlet changed. Set from Python (`ex.index = 42`), the frame is drawn before the statement
        returns, so a cell that reads it sees it. From the browser, slider moves arrive as a burst of messages:
        the frame is built on the next loop turn, for the newest of them only."""
        with self.lock:
            if index == self.index and self._wanted is None:
                return  # the cursor's own write of the traitlet it moved
            self.index = index
            if from_browser and self._wanted is not None:
                self._wanted = index  # a turn is scheduled already
                return
            if from_browser and self.hop.soon(self._deliver_wanted):
                self._wanted = index
                return
            self.goto(index)

    def _deliver_wanted(self) -> None:
        with self.lock:
            if self._wanted is not None:
                self.goto(self._wanted)

    # -- the background fold ---------------------------------------------------------------------------------

    def start(self, at: int = 0) -> None:
        """Every panel is built: fold a lazy recording on a worker thread, and draw the cursor at `at`."""
        with self.lock:  # the worker's first event waits until the panels have shown the opening
            if self.lazy:
                self.folder = threading.Thread(target=self._fold, name="agent-explorer-fold", daemon=True)
                self.folder.start()
            self.publish(Opened(self.lazy))
            self.goto(at)

    @property
    def folding(self) -> bool:
        """The recording's background fold is running."""
        return self.folder is not None and self.folder.is_alive()

    @property
    def building(self) -> bool:
        """The recording is on view and its background fold has not reached its end yet."""
        timeline = self.root.timeline
        return self.line is self.root and self.folding and timeline.built < len(timeline)

    def wait_folded(self, timeout: float | None = None) -> None:
        if self.folder is not None:
            self.folder.join(timeout)

    def _folded(self, built: int, total: int) -> None:
        self.publish(FoldProgressed(built, total))

    def _fold(self) -> None:
        """The worker thread: the one-pass indexes, then the fold in `Timeline.build`'s chunks (scrubbing waits at
        most one chunk), to the end, entries a followed run appends meanwhile included. Nothing escapes it."""
        timeline = self.root.timeline
        error: str | None = None
        try:
            usage = UsageIndex(self.root.entries)
            with self.lock:
                if self.line is self.root:
                    self.usage = usage
                    self.publish(IndexesReady())
            while timeline.built < len(timeline):  # a build folds to the end it saw: a followed run may add more
                timeline.build(progress=self._folded)
        except Exception as failure:  # noqa: BLE001 - a thread has no caller to raise to: the chip shows it
            error = f"{type(failure).__name__}: {failure}"
        machines = None
        if error is None and self.compare_with is not None:  # a second fold: off the lock, so scrubbing goes on
            machines = compare_recording(self.compare_with, self.machine, self.root.entries)
        self.publish(FoldEnded(error, machines))
