"""The per-index frame: the small JSON the widget draws for one position of the cursor.

A frame is built from a `ReplaySource` (the checkpointed `Timeline` of the log package, or anything with the
same five methods), so the cost of a cursor move is one checkpoint restore plus a few transitions, never a
refold from 0. This module only reads: it never mutates entries, never executes actions, never touches I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ..eventlog import Timeline, diff_snapshots
from ..eventlog.entries import recorded_state_hash
from .graph import active_state_ids
from .usage import USAGE_TYPE, UsageIndex
from .wire import jsonable

__all__ = [
    "USAGE_TYPE",
    "FrameBuilder",
    "ReplaySource",
    "UsageIndex",
    "open_source",
    "path_segments",
    "taken_ids",
    "value_text",
]

# Caps keep a frame small whatever the run holds: the panel shows a note and Python keeps the full value.
EVENT_TEXT_CAP = 4_000
CONTEXT_BYTES_CAP = 256_000
CHANGED_PATHS_CAP = 200


@runtime_checkable
class ReplaySource(Protocol):
    """Random access to the states of a log; `Timeline` of `agent_explorer.eventlog` is the real one.

    `trace_at(i)` returns the microsteps of entry i (`{event, transitions, exited, entered}`); sources that
    cannot trace may return []. Every index is 0-based into the log; the state at i is the state after entry i.
    """

    def __len__(self) -> int: ...

    def state_at(self, index: int) -> Any: ...

    def persisted_at(self, index: int) -> dict[str, Any]: ...

    def hash_at(self, index: int) -> str: ...

    def trace_at(self, index: int) -> list[dict[str, Any]]: ...


def open_source(
    machine: Any, entries: Sequence[Mapping[str, Any]], **options: Any
) -> ReplaySource:
    """The checkpointed Timeline over `entries` (options go to `Timeline`, e.g. `lazy=True`)."""
    return Timeline(machine, list(entries), **options)


def path_segments(path: Any) -> list[str | int]:
    """Normalise a change path (list, tuple, or `context.items[3].name` text) to a list of segments.

    The widget highlights the JSON tree by comparing segment lists, so the form `diff_snapshots` picks for
    its paths must not matter here.
    """
    if isinstance(path, (list, tuple)):
        return [p if isinstance(p, int) else str(p) for p in path]
    text = str(path)
    if text.startswith("/"):  # JSON Pointer
        return [_pointer_segment(p) for p in text[1:].split("/")] if text != "/" else []
    out: list[str | int] = []
    for part in text.replace("]", "").replace("[", ".").split("."):
        if part == "":
            continue
        out.append(int(part) if part.isdigit() else part)
    return out


def _pointer_segment(part: str) -> str | int:
    part = part.replace("~1", "/").replace("~0", "~")
    return int(part) if part.isdigit() else part


def taken_ids(steps: Sequence[Any] | None) -> list[str]:
    """Ids of the transitions a trace's microsteps took (`{transitions: [...]}` dicts or objects), first
    occurrence order, each once."""
    taken: list[str] = []
    for step in steps or []:
        transitions = step.get("transitions") if isinstance(step, Mapping) else getattr(step, "transitions", None)
        for t in transitions or []:
            tid = t.get("id") if isinstance(t, Mapping) else t
            if tid is not None and str(tid) not in taken:
                taken.append(str(tid))
    return taken


def value_text(value: Any) -> str:
    """A state value as one line: `working.drafting | monitor.idle` (regions joined by ` | `)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        parts = []
        for key, sub in value.items():
            inner = value_text(sub)
            if isinstance(sub, Mapping) and len(sub) > 1:
                inner = "(" + inner + ")"
            parts.append(f"{key}.{inner}" if inner else str(key))
        return " | ".join(parts)
    return str(value)


def _capped_json(value: Any, cap: int) -> tuple[str, bool]:
    text = json.dumps(value, default=str, ensure_ascii=False, indent=1)
    return (text[:cap], True) if len(text) > cap else (text, False)


class FrameBuilder:
    """Builds the frame for an index: state, context + changed paths, children, tags, active ids, taken ids.

    Owed effects, timers and children in flight are added by `pending.PendingFrames` (the explorer's builder),
    from the line's checkpointed `PendingIndex`.

    Holds references (source, entries, usage index), no copies, so a branch or an
    appended entry is visible without rebuilding.
    """

    def __init__(
        self,
        source: ReplaySource,
        entries: Sequence[Mapping[str, Any]],
        definition: Mapping[str, Any],
        usage: UsageIndex | None,
        machine: Any = None,
    ) -> None:
        self.machine = (
            machine if machine is not None else getattr(source, "machine", None)
        )
        self.source = source
        self.entries = entries
        self.definition = definition
        self.usage = usage  # None until a lazily opened log's background thread has built it

    def pending(self, index: int, built: int) -> dict[str, Any]:
        """The frame for an index the background fold has not reached: its entry, and how far the fold is."""
        n = len(self.entries)
        index = max(0, min(index, n - 1))
        return {
            "index": index,
            "length": n,
            "pending": True,
            "built": built,
            "entry": self._entry_view(self.entries[index]),
        }

    def build(self, index: int) -> dict[str, Any]:
        n = len(self.entries)
        if n == 0:
            return {"index": 0, "length": 0, "empty": True}
        index = max(0, min(index, n - 1))
        entry = self.entries[index]
        frame: dict[str, Any] = {
            "index": index,
            "length": n,
            "entry": self._entry_view(entry),
        }
        try:
            snapshot = self.source.state_at(index)
            persisted = self.source.persisted_at(index)
        except Exception as error:  # noqa: BLE001 - a broken entry must show as a message, not kill the widget
            frame["error"] = f"{type(error).__name__}: {error}"
            return frame
        value = persisted.get("value", getattr(snapshot, "value", None))
        context = persisted.get("context", getattr(snapshot, "context", None))
        frame.update(
            status=persisted.get("status", getattr(snapshot, "status", None)),
            value=jsonable(value),
            valueText=value_text(value),
            active=active_state_ids(self.definition, value),
            taken=self._taken(index),
            children=self._children(persisted),
            tags=sorted(str(t) for t in (getattr(snapshot, "tags", None) or [])),
            changed=self._changed(index, persisted),
            usage=self.usage.totals_at(index) if self.usage is not None else None,
            hash=self._hash(index, entry),
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
        for key in ("output", "error"):
            if key in persisted:
                frame[key] = jsonable(persisted[key])
        return frame

    def _entry_view(self, entry: Mapping[str, Any]) -> dict[str, Any]:
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

    def _taken(self, index: int) -> list[str]:
        trace = getattr(self.source, "trace_at", None)
        if not callable(trace):
            return []
        try:
            steps = trace(index)
        except Exception:  # noqa: BLE001 - a source that cannot trace still shows states
            return []
        return taken_ids(steps)

    @staticmethod
    def _children(persisted: Mapping[str, Any]) -> list[dict[str, Any]]:
        children = persisted.get("children") or {}
        out = []
        if isinstance(children, Mapping):
            for child_id, child in children.items():
                src = child.get("src") if isinstance(child, Mapping) else None
                state = (
                    child.get("snapshot") or child.get("state")
                    if isinstance(child, Mapping)
                    else None
                )
                status = state.get("status") if isinstance(state, Mapping) else None
                out.append(
                    {"id": str(child_id), "src": jsonable(src), "status": status}
                )
        return out

    def _changed(
        self, index: int, persisted: Mapping[str, Any]
    ) -> list[list[str | int]]:
        if index == 0:
            return []
        try:
            before = self.source.persisted_at(index - 1)
        except Exception:  # noqa: BLE001 - no previous state, nothing to compare
            return []
        changes = diff_snapshots(before, persisted)
        paths = []
        for change in list(changes)[:CHANGED_PATHS_CAP]:
            path = (
                change.get("path")
                if isinstance(change, Mapping)
                else getattr(change, "path", None)
            )
            if path is not None:
                paths.append(path_segments(path))
        return paths

    def _hash(self, index: int, entry: Mapping[str, Any]) -> dict[str, Any]:
        recorded = recorded_state_hash(entry) if isinstance(entry, Mapping) else None
        try:
            replayed = self.source.hash_at(index)
        except Exception:  # noqa: BLE001 - hashing is informative
            replayed = None
        ok = None if recorded is None or replayed is None else recorded == replayed
        return {"recorded": recorded, "replayed": replayed, "ok": ok}
