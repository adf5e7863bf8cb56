"""Usage: cumulative tokens (and cost) up to the cursor, plotted over the run, and the per-record ledger.

Owns `usage_series` (the small cumulative plot) and `usage_ledger` (lines per model, compared branches, sums per
state). Totals at the cursor travel in the frame (the cursor panel reads the view's usage index).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ..branches import Branch
from ..events import IndexesReady, LineChanged, LineGrew
from ..protocol import UsageBranchSeries, UsageLedgerMessage, UsageLedgerView
from ..usage import UsageLedger
from .base import Handler, Panel, Traits

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["UsagePanel"]


class UsagePanel(Panel):
    TRAITS: ClassVar[tuple[str, ...]] = ("usage_series", "usage_ledger")

    def __init__(self, session: Session, traits: Traits) -> None:
        super().__init__(session, traits)
        self.label = session.thread_id or "this run"
        self.compare_with: Sequence[Branch] = ()
        self.indexes_ready()
        session.subscribe(LineChanged, self._line_changed)
        session.subscribe(LineGrew, lambda _: self.indexes_ready())
        session.subscribe(IndexesReady, lambda _: self.indexes_ready())

    def handlers(self) -> Mapping[str, Handler]:
        return {"usage-ledger": self._on_ledger}

    def _on_ledger(self, _content: UsageLedgerMessage) -> None:
        # The panel's button: this line beside every branch of the explorer (or those a cell chose to compare).
        self.ledger(compare=list(self.compare_with) or self.session.root.descendants() or None)

    def indexes_ready(self) -> None:
        usage = self.session.usage
        self.traits.set("usage_series", usage.series() if usage is not None else [])

    def ledger(self, at: int | None = None, compare: Any = None) -> UsageLedger:
        """The ledger of the line on view up to `at` (default: all of it), published with the cumulative lines
        of the `compare` branches (a branch or a list)."""
        view = self.session
        ledger = UsageLedger(view.entries, view.line.timeline.state_at, at=at, index=view.usage, label=self.label,
                             prices=view.prices)
        others = [] if compare is None else list(compare) if isinstance(compare, (list, tuple)) else [compare]
        branches: list[UsageBranchSeries] = []
        for n, branch in enumerate(others, start=1):
            label = getattr(branch, "name", None) or getattr(branch, "thread_id", None) or f"branch {n}"
            other = UsageLedger(branch.entries, branch.timeline.state_at, label=str(label), prices=view.prices)
            ledger.compared.append(other)
            branches.append({"label": other.label, "forkedAt": getattr(branch, "forked_at", None),
                             "series": other.index.series()})
        payload: UsageLedgerView = {**ledger.to_json(), "at": ledger.at, "branches": branches}
        self.traits.set("usage_ledger", payload)
        return ledger

    def _line_changed(self, changed: LineChanged) -> None:
        line, session = changed.line, self.session
        self.label = line.thread_id or (session.thread_id or "this run" if line.is_root else line.name)
        self.indexes_ready()
