"""Verification: the chip, the divergence banner and the slider's divergent marks, read off the line's one fold.

Owns `verification`. The line's timeline checks every recorded stateHash as it folds (the explorer never runs a
second verifying fold); this panel publishes what it found, and re-publishes its divergent indices to the session
(`DivergenceFound`) for the views that flag them. A long log's fold runs on the session's worker thread ("verifying…
n%" until it lands). With `compare_with`, where the two machines part is published beside it. Never raises into
the kernel: what fails shows in the panel.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, ClassVar

from ..branches import Branch
from ..events import DivergenceFound, FoldEnded, FoldProgressed, LineChanged, LineGrew, Opened
from ..protocol import MachinesComparison, Verification
from ..verification import VerificationSummary, compare_recording
from .base import Panel, Traits

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["VerificationPanel"]

PROGRESS_EVERY_S = 0.5


class VerificationPanel(Panel):
    TRAITS: ClassVar[tuple[str, ...]] = ("verification",)

    def __init__(self, session: Session, traits: Traits) -> None:
        super().__init__(session, traits)
        self.summary = VerificationSummary(status="pending")  # of the line on view
        self._machines: MachinesComparison | None = None  # the recording's machine comparison, once compared
        self._failed: VerificationSummary | None = None  # the recording's background fold, when it broke
        self._progress_at = time.monotonic()
        session.subscribe(Opened, self._opened)
        session.subscribe(LineChanged, lambda changed: self.show_line(changed.line))
        session.subscribe(LineGrew, lambda grew: self.show_line(grew.line))
        session.subscribe(FoldProgressed, self._progress)
        session.subscribe(FoldEnded, self._fold_ended)

    # -- publishing ------------------------------------------------------------------------------------

    def publish(self, summary: VerificationSummary) -> None:
        """Publish the summary of the line on view (with the machine comparison when that is the recording)."""
        session = self.session
        with session.lock:
            self.summary = summary
            payload = summary.to_json()
            payload["machines"] = self._machines if session.line is session.root else None
            self.traits.set("verification", payload)
            session.publish(DivergenceFound(summary.divergent))

    def show_line(self, line: Branch) -> None:
        """Publish what the line's fold has verified (all of it once built)."""
        timeline = line.timeline
        if line is self.session.root and self._failed is not None:
            self.publish(self._failed)
            return
        if not timeline.verifies:
            self.publish(VerificationSummary(status="off"))
            return
        try:
            report = timeline.verification
        except Exception as error:  # noqa: BLE001 - shown in the panel; the explorer stays usable
            self.publish(VerificationSummary(status="error", message=f"{type(error).__name__}: {error}"))
            return
        if timeline.built < len(timeline):
            self.publish(VerificationSummary.pending(report, len(timeline)))
        else:
            self.publish(VerificationSummary.from_report(report))

    def _opened(self, opened: Opened) -> None:
        if opened.lazy:  # the session's worker folds it: "verifying…" until it lands
            self.publish(VerificationSummary(status="pending" if self.session.root.timeline.verifies else "off"))
        else:
            session = self.session
            if session.compare_with is not None:  # where this machine parts from compare_with on the recording
                self._machines = compare_recording(session.compare_with, session.machine, session.root.entries)
            self.show_line(session.root)

    # -- the background fold -----------------------------------------------------------------------------

    def _fold_ended(self, ended: FoldEnded) -> None:
        """A branch on view keeps its chip: the recording's is read off its fold when it is checked out again."""
        session = self.session
        if ended.error is not None:
            self._failed = VerificationSummary(status="error", message=ended.error)
            if session.line is session.root:
                self.publish(self._failed)
            return
        if ended.machines is not None:  # kept for the recording: shown now if on view, else when checked out
            self._machines = ended.machines
        if session.line is session.root:
            self.show_line(session.root)

    def _progress(self, progress: FoldProgressed) -> None:
        """Publish the fold's progress at most every 0.5 s (the chip shows a percentage)."""
        now = time.monotonic()
        if now - self._progress_at < PROGRESS_EVERY_S:
            return
        self._progress_at = now
        current: Verification = self.traits.get("verification")
        if current.get("status") == "pending" and self.session.line is self.session.root:
            self.traits.set("verification", {**current, "progress": progress.built / max(1, progress.total)})

