"""What the divergence panel and the slider track show, derived once from a `verify_log` report.

Pure data shaping: never folds, never hashes, never touches the log.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..eventlog import compare_machines
from ..plural import plural
from .protocol import MachinesComparison, Verification
from .wire import jsonable

__all__ = ["VerificationSummary", "compare_recording"]


@dataclass
class VerificationSummary:
    """What the divergence panel and the slider track show, derived once from `verify_log`'s report."""

    status: Literal["ok", "diverged", "pending", "off", "error"]
    first: int | None = None
    count: int = 0
    divergent: frozenset[int] = field(default_factory=frozenset)
    detail: dict[str, Any] | None = None
    message: str | None = None
    entries: int | None = None  # how many entries the report covers
    checked: int | None = None  # of them, checked against a recorded hash
    unverified: int | None = None  # of them, carrying no hash (not checked)

    @classmethod
    def pending(cls, report: Any, total: int) -> VerificationSummary:
        """A fold still on its way: what it found so far, and how far it got."""
        summary = cls.from_report(report)
        summary.status = "pending"
        summary.message = f"verified {getattr(report, 'entries', 0):,} of {plural(total, 'entry', 'entries', thousands=True)} so far"
        return summary

    @classmethod
    def from_report(cls, report: Any) -> VerificationSummary:
        indices = sorted(
            int(i) for i in (getattr(report, "divergent_indices", None) or [])
        )
        first = getattr(report, "first_divergence", None)
        entries: int | None = getattr(report, "entries", None)
        checked: int | None = getattr(report, "checked", None)
        unverified: int | None = getattr(report, "unverified", None)
        if getattr(report, "ok", not indices) and not indices:
            return cls(status="ok", entries=entries, checked=checked, unverified=unverified)
        detail = None
        divergences = getattr(report, "divergences", None)
        if divergences:
            item = divergences[0]
            detail = {
                "index": _field(item, "index"),
                "eventId": _field(item, "event_id"),
                "event": _field(item, "event"),
                "kind": _field(item, "kind"),
                "expectedHash": _field(item, "expected_hash"),
                "actualHash": _field(item, "actual_hash"),
            }
            if first is None:
                first = detail["index"]
        if first is None and indices:
            first = indices[0]
        return cls(
            status="diverged",
            first=first,
            count=len(indices),
            divergent=frozenset(indices),
            detail=detail,
            entries=entries,
            checked=checked,
            unverified=unverified,
        )

    def ranges(self, cap: int = 400) -> list[list[int]]:
        """Divergent indices as `[start, end]` runs (inclusive), at most `cap` of them, for the slider track."""
        runs: list[list[int]] = []
        for i in sorted(self.divergent):
            if runs and runs[-1][1] == i - 1:
                runs[-1][1] = i
            else:
                if len(runs) >= cap:
                    break
                runs.append([i, i])
        return runs

    def to_json(self) -> Verification:
        payload: Verification = {
            "status": self.status,
            "first": self.first,
            "count": self.count,
            "ranges": self.ranges(),
            "detail": jsonable(self.detail),
            "message": self.message,
        }
        if self.entries is not None:
            payload["entries"] = self.entries
        if self.checked is not None:
            payload["checked"] = self.checked
        if self.unverified is not None:
            payload["unverified"] = self.unverified
        return payload


def compare_recording(recorder: Any, machine: Any, entries: Sequence[Mapping[str, Any]]) -> MachinesComparison:
    """Where `machine` parts from `recorder` (the machine that recorded the log), in the notebook's direction:
    `compare_machines(recorder, today, entries)`, so a change's `before` is the recording's side and `after` the
    replay's. A failure is the payload's `error`, never raised (the panel shows it)."""
    try:
        result = compare_machines(recorder, machine, entries)
        return {
            "index": result.index,
            "diff": jsonable([c.to_dict() for c in (result.diff or [])][:200]),
            "before": f"recording ({_name(recorder)}, compare_with)",
            "after": f"replay ({_name(machine)}, this explorer's machine)",
            "transitionsBefore": list(result.transitions_a),
            "transitionsAfter": list(result.transitions_b),
        }
    except Exception as error:  # noqa: BLE001
        return {"index": None, "diff": [], "error": f"{type(error).__name__}: {error}"}


def _name(machine: Any) -> str:
    return f"{getattr(machine, 'id', 'machine')} v{getattr(machine, 'version', '?')}"


def _field(item: Any, name: str) -> Any:
    if isinstance(item, Mapping):
        camel = "".join(
            p if k == 0 else p.title() for k, p in enumerate(name.split("_"))
        )
        return item.get(name, item.get(camel))
    return getattr(item, name, None)
