"""The cursor: which index of the line is on view, and the frame drawn for it.

Owns `index` (two-way: a slider move from the browser, `ex.index = 42` from a cell), `length` and `frame`. A
burst of slider moves from the browser builds only the newest frame (on the next event-loop turn); a move set
from Python is drawn before the statement returns. An index past a background fold's frontier shows a progress
frame until the fold gets there. Never folds on its own: frames come from the line's checkpointed timeline.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, ClassVar

from ..branches import Branch
from ..frames import FrameBuilder
from ..recording import RecordingView
from .base import Panel, Traits, View

__all__ = ["CursorPanel"]


class CursorPanel(Panel):
    TRAITS: ClassVar[tuple[str, ...]] = ("index", "length", "frame")

    def __init__(self, view: View, traits: Traits, *, lock: threading.RLock, recording: RecordingView,
                 folding: Callable[[], bool] = lambda: False) -> None:
        super().__init__(view, traits)
        self._lock = lock
        self._recording = recording
        self._frames = FrameBuilder(view.line, view.definition, view.usage, recording, view.prices)
        self._wanted: int | None = None
        self._scheduled = False
        self._deferred: int | None = None  # an index asked for beyond the background fold, drawn when reached
        self._folding = folding  # the recording's background fold is running
        self._moved: list[Callable[[int], None]] = []
        traits.set("length", len(view.entries))
        view.on_line(self._line_changed)

    @property
    def building(self) -> bool:
        """The recording is on view and its background fold has not reached its end yet."""
        root = self.view.root
        return self.view.line is root and self._folding() and root.timeline.built < len(root.timeline)

    @property
    def index(self) -> int:
        return int(self.traits.get("index"))

    def on_moved(self, listener: Callable[[int], None]) -> None:
        """Call `listener(index)` after each frame the cursor draws (the table follows, the composer refreshes)."""
        self._moved.append(listener)

    def clamp(self, value: int) -> int:
        return max(0, min(int(value), max(0, len(self.view.entries) - 1)))

    def moved(self, index: int, *, from_browser: bool) -> None:
        """The `index` traitlet changed (validated already)."""
        self._wanted = index
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None or not from_browser:
            # Set from Python (`ex.index = 42`): the frame is current when the statement returns, so a
            # cell that reads it, or a notebook saved with widget state right after, sees the new state.
            self.flush()
        elif not self._scheduled:
            # From the browser, slider moves arrive as a burst of comm messages; building the frame on the
            # next loop turn answers only the newest of them (the ones in between were superseded).
            self._scheduled = True
            loop.call_soon(self.flush)

    def flush(self) -> None:
        self._scheduled = False
        index = self.index if self._wanted is None else self._wanted
        self._wanted = None
        with self._lock:
            built = self.view.line.timeline.built
            if self.building and index >= built:
                # Past the background fold: answering now would block the kernel until the fold gets
                # there, so the view shows progress and the builder delivers the frame when it arrives.
                self._deferred = index
                self.traits.set("frame", self._frames.pending(index, built))
            else:
                self._deferred = None
                self.traits.set("frame", self._frames.build(index))
        for listener in self._moved:
            listener(index)

    def move_to(self, index: int) -> None:
        """Put the cursor at `index` (a followed run's new tail, a line that grew): moved, or redrawn where it is."""
        if self.index == index:
            self.redraw()
        else:
            self.traits.set("index", index)

    def redraw(self) -> None:
        """Rebuild the frame at the cursor (the line grew, an index arrived, a panel's data changed)."""
        self._wanted = None
        self.flush()

    def deliver_deferred(self, *, final: bool = False) -> None:
        """Called by the background builder after each chunk: draw a deferred index once reachable."""
        with self._lock:
            index = self._deferred
            if index is None:
                return
            built = self.view.line.timeline.built
            if final or index < built:
                self._deferred = None
                if index == self.index:
                    self.traits.set("frame", self._frames.build(index))
            elif index == self.index:
                self.traits.set("frame", self._frames.pending(index, built))

    def usage_ready(self) -> None:
        """The background thread built the usage index: frames carry totals from now on."""
        with self._lock:
            self._frames.usage = self.view.usage
            frame = dict(self.traits.get("frame"))
            if self._deferred is None and frame.get("index") == self.index and "usage" in frame:
                frame.update(self._frames.usage_fields(self.index))
                self.traits.set("frame", frame)

    def grown(self) -> None:
        """The line on view has more entries than `length` says (a followed thread, an append)."""
        self.traits.set("length", len(self.view.entries))

    def set_divergent(self, indices: frozenset[int]) -> None:
        """The line's verification found these divergent indices: their frames show the recording's side."""
        with self._lock:
            if indices == self._frames.divergent:
                return  # the same: the frame on view is right already
            before, self._frames.divergent = self._frames.divergent, indices
            changed = self.index in before or self.index in indices
        if changed and self._deferred is None:
            self.redraw()

    def _line_changed(self, line: Branch) -> None:
        # The recording's side is drawn on the recorded line only: a branch's own entries are what-ifs.
        self._frames = FrameBuilder(line, self.view.definition, self.view.usage,
                                    self._recording if line.is_root else None, self.view.prices)
        self._deferred = None
        self.traits.set("length", len(line.entries))

    def frame_at(self, index: int) -> dict[str, Any]:
        """The frame of any index of the line on view (the static export draws one per index)."""
        return dict(self._frames.build(index))
