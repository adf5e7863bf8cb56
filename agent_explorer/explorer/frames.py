"""The per-index frame: the small JSON the widget draws for one position of the cursor.

A frame is built from a `ReplaySource` (the checkpointed `Timeline` of the log package, or anything with the
same five methods), so the cost of a cursor move is one checkpoint restore plus a few transitions, never a
refold from 0. This module only reads: it never mutates entries, never executes actions, never touches I/O.
"""

from __future__ import annotations

import bisect
import importlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..errors import AgentError
from .graph import active_state_ids

__all__ = [
    "USAGE_TYPE",
    "FrameBuilder",
    "ReplaySource",
    "UsageIndex",
    "VerificationSummary",
    "api",
    "open_source",
    "path_segments",
    "value_text",
]

USAGE_TYPE = "@agent.usage"
# Caps keep a frame small whatever the run holds: the panel shows a note and Python keeps the full value.
EVENT_TEXT_CAP = 4_000
CONTEXT_BYTES_CAP = 256_000
CHANGED_PATHS_CAP = 200
# Owed effects are derived from the journal so far (get_agent_effects folds the prefix: ~25 ms per 1,000
# entries), so they are drawn automatically only this early in a run, and on request (a button) beyond.
EFFECTS_AUTO_LIMIT = 400


@runtime_checkable
class ReplaySource(Protocol):
    """Random access to the states of a log; `Timeline` of `agent_explorer.log` is the real one.

    `trace_at(i)` returns the microsteps of entry i (`{event, transitions, exited, entered}`); sources that
    cannot trace may return []. Every index is 0-based into the log; the state at i is the state after entry i.
    """

    def __len__(self) -> int: ...

    def state_at(self, index: int) -> Any: ...

    def persisted_at(self, index: int) -> dict[str, Any]: ...

    def hash_at(self, index: int) -> str: ...

    def trace_at(self, index: int) -> list[dict[str, Any]]: ...


_API_HOMES = (
    "agent_explorer",
    "agent_explorer.log",
    "agent_explorer.engine",
    "agent_explorer.runtime",
    "agent_explorer.steps",
)
# Where the names are defined, tried only when no package re-exports them yet (the layers land separately).
_DEFINING_MODULES = (
    "agent_explorer.log.timeline",
    "agent_explorer.log.diff",
    "agent_explorer.log.verification",
    "agent_explorer.log.entries",
    "agent_explorer.log.hashing",
    "agent_explorer.log.usage",
    "agent_explorer.runtime.parse",
)


def api(name: str) -> Any:
    """A public name of shared/API.md (`Timeline`, `diff_snapshots`, ...), looked up when first needed.

    Late lookup keeps `import agent_explorer.explorer` cheap and independent of import order; the
    top-level package is the contract, the layer packages are where the names live.
    """
    for home in _API_HOMES:
        found = getattr(importlib.import_module(home), name, None)
        if found is not None:
            return found
    for module in _DEFINING_MODULES:
        try:
            found = getattr(importlib.import_module(module), name, None)
        except ImportError:
            continue
        if found is not None:
            return found
    raise AgentError(
        f"agent_explorer.{name} is not available in this installation",
        code="missing-dependency",
    )


def open_source(
    machine: Any, entries: Sequence[Mapping[str, Any]], **options: Any
) -> ReplaySource:
    """The checkpointed Timeline over `entries` (options go to `Timeline`, e.g. `lazy=True`)."""
    return api("Timeline")(machine, list(entries), **options)  # type: ignore[no-any-return]


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


def _numeric(value: Any) -> bool:
    kind = type(value)
    return (
        kind is int
        or kind is float
        or (isinstance(value, (int, float)) and kind is not bool)
    )


class UsageIndex:
    """Cumulative usage totals at any index, from one pass over the log (prefix sums, bisected on lookup).

    Same fold as `get_usage_from_events` (numeric fields of `event.usage` summed, per-model under `byModel`),
    kept as prefix arrays because calling that function on `entries[: i + 1]` per frame would be O(n).
    """

    def __init__(self, entries: Sequence[Mapping[str, Any]]) -> None:
        self.positions: list[int] = []
        self._sums: dict[str, list[float | int]] = {}
        self._first: dict[
            str, int
        ] = {}  # key -> ordinal of the first record carrying it
        self._models: dict[str, tuple[list[int], dict[str, list[float | int]]]] = {}
        for i, entry in enumerate(entries):
            # Fast path for the common shape (plain dicts); anything odd goes through `add`'s checks.
            try:
                if entry["event"]["type"] != USAGE_TYPE:
                    continue
            except (KeyError, TypeError):
                continue
            self.add(i, entry)

    def add(self, index: int, entry: Mapping[str, Any]) -> None:
        event = entry.get("event") if isinstance(entry, (dict, Mapping)) else None
        if not isinstance(event, (dict, Mapping)) or event.get("type") != USAGE_TYPE:
            return
        usage = event.get("usage")
        usage = usage if isinstance(usage, (dict, Mapping)) else {}
        ordinal = len(self.positions)
        self.positions.append(index)
        self._push(self._sums, self._first, ordinal, usage)
        model = event.get("model")
        if isinstance(model, str):
            positions, sums = self._models.setdefault(model, ([], {}))
            positions.append(index)
            self._push(sums, None, len(positions) - 1, usage)

    @staticmethod
    def _push(
        sums: dict[str, list[float | int]],
        first: dict[str, int] | None,
        ordinal: int,
        usage: Mapping[str, Any],
    ) -> None:
        for key, value in usage.items():
            if _numeric(value) and key not in sums:
                sums[key] = [0] * ordinal
                if first is not None:
                    first[key] = ordinal
        for key, column in sums.items():
            value = usage.get(key, 0)
            previous = column[-1] if column else 0
            column.append(previous + value if _numeric(value) else previous)

    def totals_at(self, index: int) -> dict[str, Any]:
        """Cumulative totals over entries [0, index] (empty dict before the first usage record)."""
        count = bisect.bisect_right(self.positions, index)
        out: dict[str, Any] = {}
        if count == 0:
            return out
        for key, column in self._sums.items():
            if self._first.get(key, 0) < count:
                out[key] = column[count - 1]
        by_model: dict[str, dict[str, Any]] = {}
        for model, (positions, sums) in self._models.items():
            n = bisect.bisect_right(positions, index)
            if n:
                by_model[model] = {
                    key: column[n - 1]
                    for key, column in sums.items()
                    if len(column) >= n
                }
        if by_model:
            out["byModel"] = by_model
        return out

    def series(
        self, max_points: int = 240, key: str = "totalTokens"
    ) -> list[list[float | int]]:
        """`[[index, cumulative value], ...]`, down-sampled to at most `max_points` for the run's small plot."""
        column = self._sums.get(key)
        if not column:
            return []
        n = len(self.positions)
        step = max(1, -(-n // max_points))
        picks = list(range(step - 1, n, step))
        if picks and picks[-1] != n - 1:
            picks.append(n - 1)
        return [[self.positions[k], column[k]] for k in picks]


@dataclass
class VerificationSummary:
    """What the divergence panel and the slider track show, derived once from `verify_log`'s report."""

    status: str  # "ok" | "diverged" | "pending" | "off" | "error"
    first: int | None = None
    count: int = 0
    divergent: frozenset[int] = field(default_factory=frozenset)
    detail: dict[str, Any] | None = None
    message: str | None = None

    @classmethod
    def from_report(cls, report: Any) -> VerificationSummary:
        indices = sorted(
            int(i) for i in (getattr(report, "divergent_indices", None) or [])
        )
        first = getattr(report, "first_divergence", None)
        if getattr(report, "ok", not indices) and not indices:
            return cls(status="ok")
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

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "first": self.first,
            "count": self.count,
            "ranges": self.ranges(),
            "detail": jsonable(self.detail),
            "message": self.message,
        }


def _effect_json(effect: Any) -> dict[str, Any]:
    kind = getattr(effect, "kind", None)
    detail = None
    if getattr(effect, "delay", None) is not None:
        detail = f"after {effect.delay} ms: {(getattr(effect, 'event', None) or {}).get('type')}"
    return {
        "kind": kind,
        "site": getattr(effect, "site", None),
        "requestId": getattr(effect, "request_id", None),
        "detail": detail,
    }


def _field(item: Any, name: str) -> Any:
    if isinstance(item, Mapping):
        camel = "".join(
            p if k == 0 else p.title() for k, p in enumerate(name.split("_"))
        )
        return item.get(name, item.get(camel))
    return getattr(item, name, None)


def jsonable(value: Any) -> Any:
    """Round-trip through JSON with `str` for anything exotic: frames must never fail to serialise."""
    return (
        json.loads(json.dumps(value, default=str, allow_nan=False))
        if value is not None
        else None
    )


def _capped_json(value: Any, cap: int) -> tuple[str, bool]:
    text = json.dumps(value, default=str, ensure_ascii=False, indent=1)
    return (text[:cap], True) if len(text) > cap else (text, False)


class FrameBuilder:
    """Builds the frame for an index: state, context + changed paths, children, tags, active ids, taken ids.

    Holds references (source, entries, usage index, verification summary), no copies, so a branch or an
    appended entry is visible without rebuilding.
    """

    def __init__(
        self,
        source: ReplaySource,
        entries: Sequence[Mapping[str, Any]],
        definition: Mapping[str, Any],
        usage: UsageIndex,
        machine: Any = None,
    ) -> None:
        self.machine = (
            machine if machine is not None else getattr(source, "machine", None)
        )
        self.source = source
        self.entries = entries
        self.definition = definition
        self.usage = usage
        self.verification = VerificationSummary(status="pending")
        self.usage_ready = True

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
            usage=self.usage.totals_at(index) if self.usage_ready else None,
            hash=self._hash(index, entry),
        )
        context_text, _ = _capped_json(context, CONTEXT_BYTES_CAP + 1)
        if len(context_text) > CONTEXT_BYTES_CAP:
            frame["context"] = None
            frame["contextNote"] = (
                f"context is {len(context_text) // 1000} kB; too large to draw (read explorer.snapshot.context)"
            )
        else:
            frame["context"] = jsonable(context)
        for key in ("output", "error"):
            if key in persisted:
                frame[key] = jsonable(persisted[key])
        if index <= EFFECTS_AUTO_LIMIT:
            frame["effects"] = self.effects(index)
        else:
            frame["effects"] = None
            frame["effectsNote"] = (
                "derived on request past the first entries (folds the journal up to here)"
            )
        return frame

    def effects(self, index: int) -> list[dict[str, Any]] | None:
        """What the host owes after entry `index` (requests to run, timers to arm), as small dicts.

        The runtime's `get_agent_effects` over the snapshot, the actions of entry `index`'s transition and
        the journal up to it; None when no runtime is installed. Pure: nothing executes.
        """
        try:
            get_agent_effects = api("get_agent_effects")
        except AgentError:
            return None
        try:
            machine = self.machine
            event = self.entries[index]["event"]
            actions: Any = []
            if index == 0:
                if (
                    event.get("snapshot") is None
                ):  # a restored snapshot owes only what its children owe
                    _, actions = api("initial_transition")(
                        machine, input=event.get("input")
                    )
            elif event.get("type") != USAGE_TYPE:
                _, actions = api("transition")(
                    machine, self.source.state_at(index - 1), event
                )
            owed = get_agent_effects(
                machine,
                self.source.state_at(index),
                list(actions),
                history=list(self.entries[: index + 1]),
            )
        except Exception as error:  # noqa: BLE001 - informative panel; never hide the state for it
            return [
                {
                    "kind": "error",
                    "site": None,
                    "requestId": None,
                    "detail": f"{type(error).__name__}: {error}",
                }
            ]
        return [_effect_json(e) for e in owed if getattr(e, "kind", None) != "execute"]

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
            steps = trace(index) or []
        except Exception:  # noqa: BLE001 - a source that cannot trace still shows states
            return []
        taken: list[str] = []
        for step in steps:
            transitions = (
                step.get("transitions")
                if isinstance(step, Mapping)
                else getattr(step, "transitions", [])
            )
            for t in transitions or []:
                tid = t.get("id") if isinstance(t, Mapping) else t
                if tid is not None and str(tid) not in taken:
                    taken.append(str(tid))
        return taken

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
        diff_snapshots = api("diff_snapshots")
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
        verification = entry.get("verification") if isinstance(entry, Mapping) else None
        recorded = (
            verification.get("stateHash") if isinstance(verification, Mapping) else None
        )
        try:
            replayed = self.source.hash_at(index)
        except Exception:  # noqa: BLE001 - hashing is informative
            replayed = None
        ok = None if recorded is None or replayed is None else recorded == replayed
        return {"recorded": recorded, "replayed": replayed, "ok": ok}
