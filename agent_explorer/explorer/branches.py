"""Branches: fork a recorded run at an index, append what-if events, compare two timelines.

A fork is the prefix `[0, at)` (exclusive, as `fork_event_log` and `store.fork`); appends are pure folds
(no action executes) recorded as ordinary entries with their state hash. The parent log is never touched:
a branch owns its own entry list (or its own store thread).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import AgentError, AgentInvalidEventPayloadError
from .aio import run_sync
from .api import api
from .frames import ReplaySource, open_source, value_text

__all__ = [
    "AppendResult",
    "Branch",
    "BranchComparison",
    "compare_timelines",
    "validate_event",
]


@dataclass(frozen=True)
class AppendResult:
    """What one `branch.append(event)` did: the entry written, whether the state ignored the event."""

    index: int
    entry: dict[str, Any]
    ignored: bool
    value: Any
    state_hash: str | None
    message: str

    def __repr__(self) -> str:
        return f"AppendResult(index={self.index}, ignored={self.ignored}, value={value_text(self.value)!r})"


def validate_event(machine: Any, snapshot: Any, event: Any) -> dict[str, Any]:
    """The event as the machine will see it: `parse_agent_event` when the runtime provides it, else a check.

    Reserved `@agent.*` types are refused: init and usage records are written by the runtime, not by hand.
    """
    try:
        parse_agent_event = api("parse_agent_event")
    except AgentError:
        parse_agent_event = None
    if (
        not isinstance(event, Mapping)
        or not isinstance(event.get("type"), str)
        or not event.get("type")
    ):
        raise AgentInvalidEventPayloadError(
            f"branch.append expects an event dict with a non-empty string 'type', got {event!r:.200}"
        )
    if event["type"].startswith("@agent."):
        raise AgentInvalidEventPayloadError(
            f"branch.append cannot append the reserved event type {event['type']!r}: "
            "@agent.* entries are written by the runtime"
        )
    if parse_agent_event is not None:
        parsed = parse_agent_event(
            snapshot if snapshot is not None else machine, dict(event)
        )
        return dict(parsed) if isinstance(parsed, Mapping) else parsed
    return dict(event)


class Branch:
    """A forked copy of a run that can grow: `append(event)` folds the event and journals it with its hash."""

    def __init__(
        self,
        machine: Any,
        entries: Sequence[Mapping[str, Any]],
        *,
        forked_at: int,
        parent_thread_id: str | None = None,
        store: Any = None,
        thread_id: str | None = None,
        source: ReplaySource | None = None,
        check_version: bool = True,
    ) -> None:
        self.machine = machine
        self.check_version = check_version
        self.entries: list[dict[str, Any]] = [dict(e) for e in entries]
        self.forked_at = forked_at
        self.parent_thread_id = parent_thread_id
        self.store = store
        self.thread_id = thread_id
        self.source: ReplaySource = (
            source
            if source is not None
            else open_source(machine, self.entries, check_version=check_version)
        )
        self.appended: list[AppendResult] = []

    @classmethod
    def fork(
        cls,
        machine: Any,
        entries: Sequence[Mapping[str, Any]],
        at: int,
        *,
        store: Any = None,
        thread_id: str | None = None,
        new_thread_id: str | None = None,
        check_version: bool = True,
    ) -> Branch:
        """Fork `[0, at)`: through `store.fork` when the run lives in a store, else `fork_event_log`."""
        if (
            not isinstance(at, int)
            or isinstance(at, bool)
            or not 1 <= at <= len(entries)
        ):
            raise AgentError(
                f"fork(at={at!r}) must keep the init entry and stay inside the log: 1 <= at <= {len(entries)}",
                code="invalid-fork-index",
            )
        if store is not None and thread_id is not None:
            new_id = new_thread_id or f"{thread_id}~fork{at}-{uuid.uuid4().hex[:8]}"
            run_sync(
                lambda: store.fork(
                    thread_id=thread_id, new_thread_id=new_id, up_to_index=at
                )
            )
            forked = run_sync(lambda: store.read(new_id))
            return cls(
                machine,
                forked,
                forked_at=at,
                parent_thread_id=thread_id,
                store=store,
                thread_id=new_id,
                check_version=check_version,
            )
        prefix = api("fork_event_log")(list(entries), at)
        return cls(machine, prefix, forked_at=at, check_version=check_version)

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def snapshot(self) -> Any:
        return self.source.state_at(len(self.entries) - 1)

    def append(
        self, event: Mapping[str, Any], *, causation_id: str | None = None
    ) -> AppendResult:
        """Fold `event` onto the branch's last state, journal it with its state hash, say if it was ignored.

        An ignored event (no enabled transition in that state) is still journaled, as a live run would
        accept it; `result.ignored` and `result.message` say so plainly.
        """
        transition_with_trace = api("transition_with_trace")
        create_replay_entry, state_hash = api("create_replay_entry"), api("state_hash")
        before = self.snapshot
        parsed = validate_event(self.machine, before, event)
        after, _actions, trace = transition_with_trace(self.machine, before, parsed)
        taken = [t for step in trace or [] for t in (_get(step, "transitions") or [])]
        index = len(self.entries)
        entry = dict(
            create_replay_entry(
                self.machine,
                parsed,
                index,
                snapshot_after=after,
                causation_id=causation_id,
            )
        )
        if self.store is not None and self.thread_id is not None:
            run_sync(
                lambda: self.store.append(
                    thread_id=self.thread_id, expected_index=index, entries=[entry]
                )
            )
        self.entries.append(entry)
        appender = getattr(self.source, "append", None)
        if callable(appender):
            appender(entry)
        else:  # a source that cannot grow is rebuilt over the longer list
            self.source = open_source(
                self.machine, self.entries, check_version=self.check_version
            )
        persisted = self.machine.get_persisted_snapshot(after)
        value = persisted.get("value")
        verification = entry.get("verification")
        recorded = (
            verification.get("stateHash")
            if isinstance(verification, Mapping)
            else state_hash(persisted)
        )
        ignored = not taken
        where = value_text(_get(before, "value"))
        message = (
            f"{parsed['type']!r} is ignored in state {where!r}: no enabled transition; the state is unchanged"
            if ignored
            else f"{parsed['type']!r} at index {index}: {where!r} -> {value_text(value)!r}"
        )
        result = AppendResult(
            index=index,
            entry=entry,
            ignored=ignored,
            value=value,
            state_hash=recorded,
            message=message,
        )
        self.appended.append(result)
        return result

    def __repr__(self) -> str:
        where = f", thread={self.thread_id!r}" if self.thread_id else ""
        return f"Branch(forked_at={self.forked_at}, length={len(self.entries)}{where})"


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


@dataclass
class BranchComparison:
    """Two timelines side by side: the first index whose states differ and the state diff there."""

    index: int | None
    diff: list[dict[str, Any]] = field(default_factory=list)
    length_a: int = 0
    length_b: int = 0
    forked_at: int | None = None
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "diff": self.diff,
            "lengthA": self.length_a,
            "lengthB": self.length_b,
            "forkedAt": self.forked_at,
            "reason": self.reason,
        }


def compare_timelines(
    a_source: ReplaySource,
    a_entries: Sequence[Mapping[str, Any]],
    b_source: ReplaySource,
    b_entries: Sequence[Mapping[str, Any]],
    *,
    forked_at: int | None = None,
) -> BranchComparison:
    """First index where the two runs' states differ (or where one run ends), with `diff_snapshots` there.

    Entries shared verbatim (same id and event) fold to the same state, so the walk skips them without
    replaying; from the first differing entry on it compares persisted snapshots.
    """
    diff_snapshots = api("diff_snapshots")
    common = min(len(a_entries), len(b_entries))
    start = 0
    while start < common and _same_entry(a_entries[start], b_entries[start]):
        start += 1
    for i in range(start, common):
        before, after = a_source.persisted_at(i), b_source.persisted_at(i)
        if before != after:
            changes = [_change_json(c) for c in diff_snapshots(before, after)]
            return BranchComparison(
                i, changes, len(a_entries), len(b_entries), forked_at, "states differ"
            )
    if len(a_entries) == len(b_entries):
        return BranchComparison(
            None, [], len(a_entries), len(b_entries), forked_at, "identical states"
        )
    return BranchComparison(
        common,
        [],
        len(a_entries),
        len(b_entries),
        forked_at,
        f"one run ends at index {common - 1}",
    )


def _same_entry(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return a is b or (a.get("id") == b.get("id") and a.get("event") == b.get("event"))


def _change_json(change: Any) -> dict[str, Any]:
    if isinstance(change, Mapping):
        return {
            "path": change.get("path"),
            "before": change.get("before"),
            "after": change.get("after"),
        }
    return {
        "path": getattr(change, "path", None),
        "before": getattr(change, "before", None),
        "after": getattr(change, "after", None),
    }
