"""A live run, drawn: the `live` badge (following or not, when the writer last appended, how many entries arrived
past the cursor) and the messages that steer following.

Owns `live`. The following itself (the watch thread, the fold of each batch, the flow control that lets a
browser acknowledge what it drew) is the session's follower (explorer/follower.py); this panel draws what the
follower says (`LiveChanged`) and hands it the browser's requests. Never writes to the store.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ..events import LiveChanged
from ..protocol import FollowMessage, JumpToTailMessage, LiveDrawnMessage
from .base import Handler, Panel, Traits

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["LivePanel"]


class LivePanel(Panel):
    TRAITS: ClassVar[tuple[str, ...]] = ("live",)

    def __init__(self, session: Session, traits: Traits) -> None:
        super().__init__(session, traits)
        traits.set("live", {})
        session.subscribe(LiveChanged, lambda changed: self.traits.set("live", changed.state))

    def handlers(self) -> Mapping[str, Handler]:
        return {"follow": self._on_follow, "jump-to-tail": self._on_jump, "live-drawn": self._on_drawn}

    def _on_follow(self, content: FollowMessage) -> None:
        self.session.follower.follow(content.get("on", True))

    def _on_jump(self, _content: JumpToTailMessage) -> None:
        self.session.follower.jump_to_tail()

    def _on_drawn(self, content: LiveDrawnMessage) -> None:
        self.session.follower.drawn(content["seq"])
