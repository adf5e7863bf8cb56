"""Coverage: states entered and transitions taken, drawn as a heatmap on the chart.

Owns `coverage_data`. Over the explorer's own lines (the recording and every branch), given logs, or the
threads of a store; each log is one traced fold. Never writes anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ..coverage import Coverage, coverage_of, coverage_of_store
from ..protocol import CoverageMessage
from .base import Handler, Panel

__all__ = ["CoveragePanel"]


class CoveragePanel(Panel):
    TRAITS: ClassVar[tuple[str, ...]] = ("coverage_data",)

    def handlers(self) -> Mapping[str, Handler]:
        return {"coverage": self._on_coverage}

    def _on_coverage(self, _content: CoverageMessage) -> None:
        self.coverage()

    def coverage(self, logs: Any = None, *, store: Any = None, thread_ids: Sequence[str] | None = None,
                 executor: Any = None) -> Coverage:
        machine = self.session.machine
        if store is not None:
            cov = coverage_of_store(store, machine, thread_ids=thread_ids, executor=executor)
        elif logs is not None:
            cov = coverage_of(machine, logs)
        else:
            # Every line once (the recording and each branch), whichever one is on view.
            cov = coverage_of(machine, [line.entries for line in self.session.lines()])
        source = "store" if store is not None else "logs" if logs is not None else "explorer"
        data = cov.to_json()
        data["source"] = source
        self.traits.set("coverage_data", data)
        return cov
