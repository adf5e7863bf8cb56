"""The per-index frame: the small JSON the widget draws for one position of the cursor.

A frame is read off the line's one checkpointed fold (`Timeline.point_at`: the snapshot, the microsteps of
the entry and the effect ledger after it, from a single engine call when the cursor steps), so a cursor
move costs one transition (a step) or one restore plus at most K transitions (a jump), never a refold from
0. This module only reads: it never mutates entries, never executes actions, never touches I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from ..canonical import state_hash
from ..engine.values import value_text
from ..eventlog import diff_snapshots
from ..eventlog.entries import recorded_state_hash
from .branches import Branch
from .pending import pending_at
from .prices import Prices
from .protocol import ChildView, CostView, EntryView, Frame, HashCheck, PendingFrame
from .recording import RecordingView
from .statechart import active_state_ids
from .usage import UsageIndex
from .values import path_segments, taken_ids
from .wire import jsonable

__all__ = ["CHANGED_PATHS_CAP", "CONTEXT_BYTES_CAP", "EVENT_TEXT_CAP", "FrameBuilder", "UsageFields", "entry_view"]

# Caps keep a frame small whatever the run holds: the panel shows a note and Python keeps the full value.
EVENT_TEXT_CAP = 4_000
CONTEXT_BYTES_CAP = 256_000
CHANGED_PATHS_CAP = 200


def _capped_json(value: Any, cap: int) -> tuple[str, bool]:
    text = json.dumps(value, default=str, ensure_ascii=False, indent=1)
    return (text[:cap], True) if len(text) > cap else (text, False)


class UsageFields(TypedDict):
    """A frame's usage totals at its index (None until the usage index exists) and, with prices and some usage,
    their cost: the frame's `usage` and `cost`."""

    usage: dict[str, Any] | None
    cost: NotRequired[CostView | None]


def entry_view(entry: Mapping[str, Any]) -> EntryView:
    """The entry as the state panel shows it (its event as capped, indented JSON text)."""
    event = entry.get("event") if isinstance(entry, Mapping) else None
    event_type = event.get("type") if isinstance(event, Mapping) else None
    text, truncated = _capped_json(event, EVENT_TEXT_CAP)
    return {
        "index": entry.get("index"),
        "id": entry.get("id"),
        "type": str(event_type) if event_type is not None else None,
        "recordedAt": entry.get("recordedAt"),
        "causationId": entry.get("causationId"),
        "machineVersion": entry.get("machineVersion"),
        "eventText": text,
        "eventTruncated": truncated,
    }


class FrameBuilder:
    """Builds the frame for an index of one line: state, context + changed paths, children, tags, active ids,
    taken ids, hash, usage totals, and what is pending (timers, children in flight, effects owed).

    Holds references (the line, its usage index), no copies, so an appended entry is visible at once.
    """

    def __init__(self, line: Branch, definition: Mapping[str, Any], usage: UsageIndex | None,
                 recording: RecordingView | None = None, prices: Prices | None = None) -> None:
        self.line = line
        self.definition = definition
        self.prices = prices
        self.usage = usage  # None until a lazily opened log's background thread has built it
        # The recording's side at divergent indices (the recorded line only: a branch's own entries are what-ifs).
        self.recording = recording
        self.divergent: frozenset[int] = frozenset()

    def pending(self, index: int, built: int) -> PendingFrame:
        """The frame for an index the background fold has not reached: its entry, and how far the fold is."""
        entries = self.line.entries
        index = max(0, min(index, len(entries) - 1))
        return {"index": index, "length": len(entries), "pending": True, "built": built,
                "entry": entry_view(entries[index])}

    def build(self, index: int) -> Frame:
        entries = self.line.entries
        timeline = self.line.timeline
        index = max(0, min(index, len(entries) - 1))
        entry = entries[index]
        frame: Frame = {"index": index, "length": len(entries), "entry": entry_view(entry)}
        try:
            point = timeline.point_at(index)
            persisted = timeline.machine.get_persisted_snapshot(point.snapshot)
        except Exception as error:  # noqa: BLE001 - a broken entry must show as a message, not kill the widget
            frame["error"] = f"{type(error).__name__}: {error}"
            return frame
        snapshot = point.snapshot
        value = persisted.get("value")
        context = persisted.get("context")
        frame["status"] = persisted.get("status")
        frame["value"] = jsonable(value)
        frame["valueText"] = value_text(value)
        frame["active"] = active_state_ids(self.definition, value)
        frame["taken"] = taken_ids(point.trace)
        frame["children"] = _children(persisted)
        frame["tags"] = sorted(str(t) for t in (getattr(snapshot, "tags", None) or []))
        frame["changed"] = self._changed(index, persisted)
        usage = self.usage_fields(index)
        frame["usage"] = usage["usage"]
        if "cost" in usage:
            frame["cost"] = usage["cost"]
        frame["hash"] = self._hash(entry, persisted)
        if self.recording is not None and index in self.divergent:
            try:
                frame["recording"] = self.recording.at(index).to_json()
            except Exception as error:  # noqa: BLE001 - the replay side stays drawn; the panel says what broke
                frame["recording"] = {"index": index, "source": "error", "active": [], "valueText": None,
                                      "reason": f"{type(error).__name__}: {error}", "candidates": False,
                                      "reproduces": None}
        if point.error is not None:
            frame["foldError"] = (
                f"folding this entry raised {type(point.error).__name__}: {point.error}; "
                "the state shown is the one before it"
            )
        # One serialisation both measures the context and makes it wire-safe (what `jsonable` does).
        context_text = json.dumps(context, default=str, allow_nan=False)
        if len(context_text) > CONTEXT_BYTES_CAP:
            frame["context"] = None
            frame["contextNote"] = (
                f"context is {len(context_text) // 1000} kB; too large to draw (read explorer.snapshot.context)"
            )
        else:
            frame["context"] = json.loads(context_text)
        if "output" in persisted:
            frame["output"] = jsonable(persisted["output"])
        if "error" in persisted:
            frame["machineError"] = jsonable(persisted["error"])
        try:
            found = pending_at(point).to_json()
            frame["effects"], frame["timers"], frame["inflight"] = found["owed"], found["timers"], found["inflight"]
        except Exception as error:  # noqa: BLE001 - informative panel; never hide the state for it
            detail = f"{type(error).__name__}: {error}"
            frame["effects"] = [{"kind": "error", "site": None, "requestId": None, "detail": detail}]
            frame["timers"], frame["inflight"] = [], []
        return frame

    def usage_fields(self, index: int) -> UsageFields:
        """The frame's `usage` (the totals up to `index`) and, with prices and some usage, its `cost`."""
        usage = self.usage.totals_at(index) if self.usage is not None else None
        fields: UsageFields = {"usage": usage}
        if self.prices and usage:
            fields["cost"] = self.prices.cost_of_totals(usage)
        return fields

    def _changed(self, index: int, persisted: Mapping[str, Any]) -> list[list[str | int]]:
        if index == 0:
            return []
        try:
            before = self.line.timeline.persisted_at(index - 1)
        except Exception:  # noqa: BLE001 - no previous state, nothing to compare
            return []
        paths = []
        for change in diff_snapshots(before, persisted)[:CHANGED_PATHS_CAP]:
            paths.append(path_segments(change.path))
        return paths

    @staticmethod
    def _hash(entry: Mapping[str, Any], persisted: Mapping[str, Any]) -> HashCheck:
        recorded = recorded_state_hash(entry) if isinstance(entry, Mapping) else None
        try:
            replayed: str | None = state_hash(persisted)
        except Exception:  # noqa: BLE001 - hashing is informative
            replayed = None
        ok = None if recorded is None or replayed is None else recorded == replayed
        return {"recorded": recorded, "replayed": replayed, "ok": ok}


def _children(persisted: Mapping[str, Any]) -> list[ChildView]:
    children = persisted.get("children") or {}
    out: list[ChildView] = []
    if isinstance(children, Mapping):
        for child_id, child in children.items():
            src = child.get("src") if isinstance(child, Mapping) else None
            state = child.get("snapshot") or child.get("state") if isinstance(child, Mapping) else None
            status = state.get("status") if isinstance(state, Mapping) else None
            out.append({"id": str(child_id), "src": jsonable(src), "status": status})
    return out
