"""Verification: the chip, the divergence banner and the slider's divergent marks, read off the line's one fold.

Owns `verification`. The line's timeline checks every recorded stateHash as it folds (the explorer never runs a
second verifying fold); this panel publishes what it found, and for a long log drives that fold on a worker
thread so the widget opens at once ("verifying… n%" until it lands). With `compare_with`, where the two
machines part is published beside it. Never raises into the kernel: what fails shows in the panel.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, ClassVar

from ...eventlog import compare_machines
from ..branches import Branch
from ..protocol import MachinesComparison, Verification
from ..verification import VerificationSummary
from ..wire import jsonable
from .base import Panel, Traits, View

__all__ = ["VerificationPanel"]

PROGRESS_EVERY_S = 0.5


class VerificationPanel(Panel):
    TRAITS: ClassVar[tuple[str, ...]] = ("verification",)

    def __init__(self, view: View, traits: Traits, *, lock: threading.RLock, compare_with: Any = None,
                 on_summary: Callable[[VerificationSummary], None] | None = None) -> None:
        super().__init__(view, traits)
        self._lock = lock
        self.compare_with = compare_with
        self._on_summary = on_summary
        self.summary = VerificationSummary(status="pending")  # of the line on view
        self._machines: MachinesComparison | None = None  # the recording's machine comparison, once compared
        self._failed: VerificationSummary | None = None  # the recording's background fold, when it broke
        self.worker: threading.Thread | None = None
        self._progress_at = time.monotonic()
        view.on_line(self._line_changed)

    # -- publishing ------------------------------------------------------------------------------------

    def publish(self, summary: VerificationSummary) -> None:
        """Publish the summary of the line on view (with the machine comparison when that is the recording)."""
        with self._lock:
            self.summary = summary
            payload = summary.to_json()
            payload["machines"] = self._machines if self.view.line is self.view.root else None
            self.traits.set("verification", payload)
        if self._on_summary is not None:
            self._on_summary(summary)

    def show_line(self, line: Branch) -> None:
        """Publish what the line's fold has verified (all of it once built)."""
        timeline = line.timeline
        if line is self.view.root and self._failed is not None:
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

    def compare(self) -> None:
        """Where this machine parts from `compare_with` (the machine that recorded the log) on the recording, in
        the notebook's direction: `compare_machines(recorder, today, entries)`, so a change's `before` is the
        recording's side and `after` the replay's. Kept for the recording: shown now if it is on view, else when
        it is checked out again."""
        if self.compare_with is None:
            return
        try:
            result = compare_machines(self.compare_with, self.view.machine, self.view.root.entries)
            machines: MachinesComparison = {
                "index": result.index,
                "diff": jsonable([c.to_dict() for c in (result.diff or [])][:200]),
                "before": f"recording ({_name(self.compare_with)}, compare_with)",
                "after": f"replay ({_name(self.view.machine)}, this explorer's machine)",
                "transitionsBefore": list(result.transitions_a),
                "transitionsAfter": list(result.transitions_b),
            }
        except Exception as error:  # noqa: BLE001
            machines = {"index": None, "diff": [], "error": f"{type(error).__name__}: {error}"}
        with self._lock:
            self._machines = machines
            if self.view.line is self.view.root:
                self.publish(self.summary)

    # -- the background fold -----------------------------------------------------------------------------

    def start_background(self, *, on_chunk: Callable[[], None], on_indexes: Callable[[], None],
                         on_done: Callable[[], None]) -> None:
        """Fold a long line on a worker thread, in `Timeline.build`'s chunks (scrubbing waits at most one chunk):
        checkpoints, ledger and hashes in the one pass, to the end, entries a followed run appends meanwhile
        included; `on_indexes` once the one-pass indexes (usage, type counts) are built, `on_chunk` after each
        chunk, `on_done` at the end (also on failure)."""
        self.publish(VerificationSummary(status="pending" if self.view.root.timeline.verifies else "off"))
        self.worker = threading.Thread(target=self._background, args=(on_chunk, on_indexes, on_done),
                                       name="agent-explorer-fold", daemon=True)
        self.worker.start()

    def _background(self, on_chunk: Callable[[], None], on_indexes: Callable[[], None],
                    on_done: Callable[[], None]) -> None:
        """The worker thread's whole job; nothing may escape it (the view reports what failed)."""
        timeline = self.view.root.timeline

        def chunk_folded(built: int, total: int) -> None:
            self._progress(built, total)
            on_chunk()

        try:
            on_indexes()
            while timeline.built < len(timeline):  # a build folds to the end it saw: a followed run may add more
                timeline.build(progress=chunk_folded)
            on_done()
            with self._lock:  # a branch on view keeps its chip: the recording's is read off its fold on return
                if self.view.line is self.view.root:
                    self.show_line(self.view.root)
            self.compare()
        except Exception as error:  # noqa: BLE001 - a thread has no caller to raise to
            on_done()
            with self._lock:
                self._failed = VerificationSummary(status="error", message=f"{type(error).__name__}: {error}")
                if self.view.line is self.view.root:
                    self.publish(self._failed)

    def _progress(self, done: int, total: int) -> None:
        """Publish the fold's progress at most every 0.5 s (the chip shows a percentage)."""
        now = time.monotonic()
        if now - self._progress_at < PROGRESS_EVERY_S:
            return
        self._progress_at = now
        with self._lock:
            current: Verification = self.traits.get("verification")
            if current.get("status") == "pending" and self.view.line is self.view.root:
                self.traits.set("verification", {**current, "progress": done / max(1, total)})

    @property
    def folding(self) -> bool:
        """The background fold's worker is running."""
        return self.worker is not None and self.worker.is_alive()

    def wait(self, timeout: float | None = None) -> dict[str, Any]:
        """Block until a background fold finished; returns the `verification` payload."""
        if self.worker is not None:
            self.worker.join(timeout)
        return dict(self.traits.get("verification"))

    # -- lines -------------------------------------------------------------------------------------------

    def _line_changed(self, line: Branch) -> None:
        # Read off the line's own fold, the recording's included (its timeline holds what its fold has verified).
        self.show_line(line)


def _name(machine: Any) -> str:
    return f"{getattr(machine, 'id', 'machine')} v{getattr(machine, 'version', '?')}"
