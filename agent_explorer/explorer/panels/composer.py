"""The event composer ("What if"): the events the state at the cursor accepts, a dry run, and Send.

Owns `composer` (while open). Send appends to the branch on view at its last index, or forks the line after the
cursor first, then views the branch on the new entry. All of it in memory: the source log and its store are
never written (`branch.save()` does that, when the user asks).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ...errors import AgentError
from ..branches import AppendResult, validate_event
from ..composer import composer_payload, dry_run
from ..events import CursorMoved
from ..pending import pending_at
from ..protocol import ComposeMessage, ComposerCheck, ComposerMessage, ComposerView
from ..wire import jsonable
from .base import Handler, Panel, Traits

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["ComposerPanel"]


class ComposerPanel(Panel):
    TRAITS: ClassVar[tuple[str, ...]] = ("composer",)

    def __init__(self, session: Session, traits: Traits) -> None:
        super().__init__(session, traits)
        self.open = False
        session.subscribe(CursorMoved, lambda moved: self.refresh(moved.index))

    def handlers(self) -> Mapping[str, Handler]:
        return {"composer": self._on_open, "compose-check": self._on_check, "compose-send": self._on_send}

    def refresh(self, index: int | None = None) -> None:
        if not self.open:
            return
        index = self.session.index if index is None else index
        line = self.session.line
        try:
            point = line.timeline.point_at(index, traced=False)
            self.traits.set("composer", composer_payload(
                self.session.machine, point.snapshot, pending_at(point), index=index, line=line.name,
                last=not line.is_root and index == len(line.entries) - 1,
            ))
        except Exception as error:  # noqa: BLE001 - the panel says what broke; the explorer stays usable
            self.traits.set("composer", {"index": index, "error": f"{type(error).__name__}: {error}", "choices": []})

    def compose(self, event: Mapping[str, Any], at: int | None = None) -> AppendResult:
        session = self.session
        with session.lock:
            at = session.index if at is None else at
            line = session.line
            # Refused events must not leave an empty fork behind: validate against the state at `at` first.
            point = line.timeline.point_at(at, traced=False)
            validate_event(session.machine, point.snapshot, event, pending_at(point))
            if line.is_root or at != len(line.entries) - 1:
                line = line.fork(at + 1)  # the lineage draws it when the session shows it
            result = line.append(event)
            session.show(line, result.index)
        return result

    def _on_open(self, content: ComposerMessage) -> None:
        self.open = content.get("open", True)
        self.refresh()

    def _on_check(self, content: ComposeMessage) -> None:
        index = self.session.index
        event = content.get("event")
        point = self.session.line.timeline.point_at(index, traced=False)
        check = dry_run(self.session.machine, point.snapshot, pending_at(point), event)
        checked: ComposerCheck = {**check, "nonce": content.get("nonce")}
        current: ComposerView = self.traits.get("composer")
        view: ComposerView = {**current, "check": checked}
        self.traits.set("composer", view)

    def _on_send(self, content: ComposeMessage) -> None:
        event = content.get("event")
        nonce = content.get("nonce")
        # One message to the browser: the view at the new entry and what was sent arrive together, so the form is
        # never drawn at the new index with the sent event's fields (and their errors) still in it.
        with self.traits.hold():
            try:
                result = self.compose(event if isinstance(event, Mapping) else {})
            except AgentError as error:
                shown: ComposerView = self.traits.get("composer")
                refused: ComposerView = {**shown, "check": {
                    "ok": False, "error": error.message, "fields": list(getattr(error, "fields", None) or []),
                    "nonce": nonce}}
                self.traits.set("composer", refused)
                return
            # The view moved to the new entry (refresh drew the choices there); say what was sent, and clear the
            # form's last check so it does not show the previous event's errors.
            moved: ComposerView = self.traits.get("composer")
            sent: ComposerView = {**moved, "sent": {
                "index": result.index, "ignored": result.ignored, "message": result.message,
                "line": self.session.line.name, "nonce": nonce, "event": jsonable(result.entry.get("event"))}}
            sent.pop("check", None)
            self.traits.set("composer", sent)
