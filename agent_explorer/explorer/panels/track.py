"""The state track panel: owns `state_track`, the active states of every index of the line on view.

Published once the line's fold has covered all of it (at once for a log folded before the widget returns; when
the background fold lands for a long one), replaced on a checkout, and re-sent as a followed run grows only
when it grew by an eighth (or is small), so a million-entry track (1-2 MB) is not re-sent per batch: indices past
the track's `length` are drawn from the kernel's frame, as without a track. The browser uses it to light a
slider move's states in the same frame as the input (js/src/state-track.js).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from ..branches import Branch
from ..events import LineChanged
from ..track import state_track
from .base import Panel, Traits

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["TrackPanel"]

SMALL_TRACK = 65_536  # indices: a track this short is re-sent on every growth (at most 128 KB)
RESEND_SHARE = 8  # a longer one when the line grew by 1/8 of what was sent


class TrackPanel(Panel):
    TRAITS: ClassVar[tuple[str, ...]] = ("state_track",)

    def __init__(self, session: Session, traits: Traits) -> None:
        super().__init__(session, traits)
        self._sent: tuple[Branch, int] | None = None  # the line whose track is on the wire, and its length
        self._watched: list[Branch] = []
        traits.set("state_track", {})
        session.subscribe(LineChanged, lambda event: self._show(event.line))
        self._show(session.line)

    def _show(self, line: Branch) -> None:
        """A line came on view: its track if its fold is complete, else none until it is."""
        if all(watched is not line for watched in self._watched):
            self._watched.append(line)
            line.timeline.on_built(lambda _built: self._built(line))
        self._publish(line, force=True)

    def _built(self, line: Branch) -> None:
        """The line's fold reached its end (the background fold landed, a followed run's batch was folded). A
        followed batch is folded under the session's lock already (follower.py), so taking it here keeps the one
        order, session lock then Timeline lock, in every thread."""
        self._publish(line, force=False)

    def _publish(self, line: Branch, *, force: bool) -> None:
        timeline = line.timeline
        if not force and not self._worth_sending(line, timeline.built):
            return
        complete = timeline.built >= len(timeline)
        track = state_track(line.name, timeline, self.session.definition) if complete else None
        with self.session.lock:
            if line is not self.session.line or (not force and not self._worth_sending(line, timeline.built)):
                return
            if track is None:
                self._sent = None
                self.traits.set("state_track", {})
            else:
                self._sent = (line, track["length"])
                self.traits.set("state_track", track)

    def _worth_sending(self, line: Branch, length: int) -> bool:
        """A growth of the line on view is re-sent when its track is short or grew by a share of what was sent."""
        sent = self._sent[1] if self._sent is not None and self._sent[0] is line else 0
        grown = length - sent
        return line is self.session.line and grown > 0 and (not sent or sent <= SMALL_TRACK or grown >= sent // RESEND_SHARE)
