"""Structural diff of persisted snapshots, and the two-machine comparison built on it.

Job: say *what* differs between two persisted snapshots (state value, context paths, children,
status, historyValue, output/error) as a flat list of `Change`s the explorer can highlight, and
find the first log index where two machines fold the same log differently. Pure: it never
mutates its inputs and never executes an action; `compare_machines` only folds with the engine's
pure API.

Paths are tuples of keys (str) and list positions (int) from the snapshot's root, e.g.
`("context", "messages", 3, "text")`; `Change.pointer` renders the same path as an RFC 6901 JSON
Pointer (`/context/messages/3/text`). Tuples were chosen over pointer strings because callers
(the explorer's context highlighter) match on prefixes, which is exact on tuples and needs
escaping rules on strings.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..engine import transition_with_trace
from .fold import fold

__all__ = [
    "Change",
    "ChangeKind",
    "MachineComparison",
    "compare_machines",
    "diff_snapshots",
    "json_equal",
]

ChangeKind = Literal["added", "removed", "changed"]
PathPart = str | int

_MISSING: Any = object()


@dataclass(frozen=True, slots=True)
class Change:
    """One difference between snapshot `a` (before) and snapshot `b` (after).

    `kind` is "added" (only in `b`; `before` is None), "removed" (only in `a`; `after` is None)
    or "changed" (in both, different; a leaf, or a container whose type differs).
    """

    path: tuple[PathPart, ...]
    before: Any
    after: Any
    kind: ChangeKind

    @property
    def pointer(self) -> str:
        """The path as an RFC 6901 JSON Pointer ("" is the whole document)."""
        return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in self.path)

    @property
    def section(self) -> str | None:
        """The top-level key the change lives under ("value", "context", "children", ...)."""
        return str(self.path[0]) if self.path else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": list(self.path),
            "pointer": self.pointer,
            "kind": self.kind,
            "before": self.before,
            "after": self.after,
        }


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON (and its JCS hash) sees it, not as Python does.

    Python says `True == 1` and `1 == 1.0`; JSON keeps booleans apart from numbers but (like
    JCS, which prints both as `1`) does not distinguish an integral float from the int.
    """
    if a is b:
        return True
    ta, tb = type(a), type(b)
    if ta is bool or tb is bool:
        return ta is tb and a == b
    if ta is dict and tb is dict:
        if len(a) != len(b):
            return False
        for key, value in a.items():
            other = b.get(key, _MISSING)
            if other is _MISSING or not json_equal(value, other):
                return False
        return True
    if ta is list and tb is list:
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) or isinstance(b, Mapping) or _is_array(a) or _is_array(b):
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            return json_equal(dict(a), dict(b))
        if _is_array(a) and _is_array(b):
            return json_equal(list(a), list(b))
        return False
    return bool(a == b)


def diff_snapshots(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[Change]:
    """Every difference between two persisted snapshots, in document order of `a` then `b`.

    Works on any JSON objects, so the keys XState persists (`status`, `value`, `historyValue`,
    `context`, `children`, `output`, `error`) and extras such as `agentMeta` are all covered.
    Dicts are compared key by key (a key only in one side is one added/removed change, not one
    per leaf below it); lists position by position, so an appended item is one "added" change
    at its index. Equal snapshots give `[]`.
    """
    return list(_diff((), a, b))


def _is_array(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes | bytearray)


def _diff(path: tuple[PathPart, ...], a: Any, b: Any) -> Iterator[Change]:
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key, before in a.items():
            after = b.get(key, _MISSING)
            if after is _MISSING:
                yield Change(path + (key,), before, None, "removed")
            else:
                yield from _diff(path + (key,), before, after)
        for key, after in b.items():
            if key not in a:
                yield Change(path + (key,), None, after, "added")
        return
    if _is_array(a) and _is_array(b):
        common = min(len(a), len(b))
        for position in range(common):
            yield from _diff(path + (position,), a[position], b[position])
        for position in range(common, len(a)):
            yield Change(path + (position,), a[position], None, "removed")
        for position in range(common, len(b)):
            yield Change(path + (position,), None, b[position], "added")
        return
    if not json_equal(a, b):
        yield Change(path, a, b, "changed")


@dataclass(frozen=True)
class MachineComparison:
    """Where and how two machines part ways on one log.

    `index` is the first entry position whose persisted snapshots differ (None when the two
    folds agree on every entry; then `diff` is empty and the snapshots are the final ones).
    `diff` is `diff_snapshots(snapshot_a, snapshot_b)` at that index. `transitions_a/_b` list
    the transition ids each machine took on that entry (flattened over its microsteps; empty
    for the init entry and for `@agent.usage` entries), `trace_a/_b` the full microsteps.
    """

    index: int | None
    diff: list[Change]
    transitions_a: list[str]
    transitions_b: list[str]
    snapshot_a: dict[str, Any] | None
    snapshot_b: dict[str, Any] | None
    entry: dict[str, Any] | None = None
    trace_a: list[dict[str, Any]] = field(default_factory=list)
    trace_b: list[dict[str, Any]] = field(default_factory=list)
    compared: int = 0

    @property
    def same(self) -> bool:
        """True when both machines fold the whole log to the same persisted snapshots."""
        return self.index is None

    @property
    def event(self) -> dict[str, Any] | None:
        return None if self.entry is None else self.entry.get("event")

    def __str__(self) -> str:
        if self.index is None:
            if self.compared == 1:
                return "Both machines agree on the one entry."
            return f"Both machines agree on all {self.compared} entries."
        event_type = (self.event or {}).get("type")
        lines = [f"Machines part ways at entry {self.index} (event {event_type!r}):"]
        lines.append(f"  a took {self.transitions_a or '[]'}; b took {self.transitions_b or '[]'}")
        for change in self.diff[:20]:
            lines.append(f"  {change.kind:<8} {change.pointer or '/'}: {change.before!r} -> {change.after!r}")
        if len(self.diff) > 20:
            lines.append(f"  ... and {len(self.diff) - 20} more changes")
        return "\n".join(lines)


def compare_machines(
    machine_a: Any,
    machine_b: Any,
    entries: Iterable[Mapping[str, Any]],
    *,
    check_version: bool = False,
) -> MachineComparison:
    """Fold one log through two machines in lockstep and stop at the first differing index.

    The usual pair is the machine version that recorded the log and today's, so entries are
    not checked against either machine's id/version unless `check_version=True` (then against
    `machine_a`, the recorder). Hashes in the log are ignored: this compares the two folds with
    each other, not with the record (that is `verify_log`). Pure.
    """
    from itertools import tee


    entries_a, entries_b = tee(entries)
    persisted_a: dict[str, Any] = {}
    persisted_b: dict[str, Any] = {}
    compared = 0
    before: tuple[Any, Any] | None = None
    for step_a, step_b in zip(
        fold(machine_a, entries_a, check_version=check_version), fold(machine_b, entries_b, check_version=False),
        strict=True,
    ):
        compared += 1
        if step_a.changed or step_b.changed or not persisted_a:
            persisted_a = machine_a.get_persisted_snapshot(step_a.snapshot)
            persisted_b = machine_b.get_persisted_snapshot(step_b.snapshot)
            if not json_equal(persisted_a, persisted_b):
                trace_a: list[dict[str, Any]] = []
                trace_b: list[dict[str, Any]] = []
                if before is not None:  # the microsteps each machine took on this entry (one re-trace, here only)
                    event = step_a.entry["event"]
                    trace_a = transition_with_trace(machine_a, before[0], event)[2]
                    trace_b = transition_with_trace(machine_b, before[1], event)[2]
                return MachineComparison(
                    step_a.index,
                    diff_snapshots(persisted_a, persisted_b),
                    _transition_ids(trace_a),
                    _transition_ids(trace_b),
                    persisted_a,
                    persisted_b,
                    dict(step_a.entry),
                    trace_a,
                    trace_b,
                    compared=compared,
                )
        before = (step_a.snapshot, step_b.snapshot)
    return MachineComparison(None, [], [], [], persisted_a, persisted_b, None, compared=compared)


def _transition_ids(trace: list[dict[str, Any]]) -> list[str]:
    return [transition_id for step in trace for transition_id in step.get("transitions", ())]
