"""The cursor: which index of the line is on view, and the frame drawn for it.

Owns `index` (two-way: a slider move from the browser, `ex.index = 42` from a cell; the session keeps where the
cursor is and when a move is drawn), `length` and `frame`. An index past a background fold's frontier shows a
progress frame until the fold gets there. Never folds on its own: frames come from the line's checkpointed
timeline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from ..branches import Branch
from ..events import CursorMoved, DivergenceFound, FoldEnded, FoldProgressed, IndexesReady, LineChanged, LineGrew
from ..frames import FrameBuilder
from .base import Panel, Traits

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["CursorPanel"]


class CursorPanel(Panel):
    TRAITS: ClassVar[tuple[str, ...]] = ("index", "length", "frame")

    def __init__(self, session: Session, traits: Traits) -> None:
        super().__init__(session, traits)
        self._frames = self._builder(session.line)
        self._deferred: int | None = None  # an index asked for beyond the background fold, drawn when reached
        traits.set("length", len(session.entries))
        session.subscribe(CursorMoved, self._moved)
        session.subscribe(LineChanged, self._line_changed)
        session.subscribe(LineGrew, self._grew)
        session.subscribe(DivergenceFound, self._divergence)
        session.subscribe(IndexesReady, self._usage_ready)
        session.subscribe(FoldProgressed, lambda _: self._deliver_deferred())
        session.subscribe(FoldEnded, lambda _: self._deliver_deferred(final=True))

    def _builder(self, line: Branch) -> FrameBuilder:
        # The recording's side is drawn on the recorded line only: a branch's own entries are what-ifs.
        session = self.session
        return FrameBuilder(line, session.definition, session.usage, session.recording if line.is_root else None,
                            session.prices)

    def _moved(self, moved: CursorMoved) -> None:
        index = moved.index
        self.traits.set("index", index)  # the session's cursor (the traitlet's own change comes back as a no-op)
        built = self.session.line.timeline.built
        if self.session.building and index >= built:
            # Past the background fold: answering now would block the kernel until the fold gets there, so the
            # view shows progress and the frame is drawn when the fold arrives.
            self._deferred = index
            self.traits.set("frame", self._frames.pending(index, built))
        else:
            self._deferred = None
            self.traits.set("frame", self._frames.build(index))

    def _redraw(self) -> None:
        index = self.session.index
        self.traits.set("frame", self._frames.build(index))

    def _deliver_deferred(self, *, final: bool = False) -> None:
        """The background fold folded a chunk (or ended): draw a deferred index once reachable."""
        index = self._deferred
        if index is None:
            return
        built = self.session.line.timeline.built
        if final or index < built:
            self._deferred = None
            if index == self.session.index:
                self.traits.set("frame", self._frames.build(index))
        elif index == self.session.index:
            self.traits.set("frame", self._frames.pending(index, built))

    def _usage_ready(self, _event: IndexesReady) -> None:
        """The background thread built the usage index: frames carry totals from now on."""
        self._frames.usage = self.session.usage
        index = self.session.index
        frame = dict(self.traits.get("frame"))
        if self._deferred is None and frame.get("index") == index and "usage" in frame:
            frame.update(self._frames.usage_fields(index))
            self.traits.set("frame", frame)

    def _grew(self, _event: LineGrew) -> None:
        self.traits.set("length", len(self.session.entries))

    def _divergence(self, found: DivergenceFound) -> None:
        """The line's verification found these divergent indices: their frames show the recording's side."""
        if found.divergent == self._frames.divergent:
            return  # the same: the frame on view is right already
        before, self._frames.divergent = self._frames.divergent, found.divergent
        index = self.session.index
        if (index in before or index in found.divergent) and self._deferred is None:
            self._redraw()

    def _line_changed(self, changed: LineChanged) -> None:
        self._frames = self._builder(changed.line)
        self._deferred = None
        self.traits.set("length", len(changed.line.entries))

    def frame_at(self, index: int) -> dict[str, Any]:
        """The frame of any index of the line on view (the static export draws one per index)."""
        return dict(self._frames.build(index))
