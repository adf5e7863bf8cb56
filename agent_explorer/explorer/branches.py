"""Branches: fork a recorded run at an index (and forks of forks), append what-if events, diff two lines.

A fork is the prefix `[0, at)` (exclusive, as `fork_event_log` and `store.fork`) sharing its parent's checkpoints
(nothing is refolded, no recorded completion is re-executed); appends are pure folds (no action executes)
recorded as ordinary entries with their state hash. Every branch knows its parent and fork index, so the
lineage is a tree. The parent log is never touched: a branch owns its own entry list (or its own store thread).
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..canonical import assert_json_serializable, state_hash
from ..engine import transition_with_trace
from ..errors import AgentError, AgentInvalidEventPayloadError, AgentStoreError
from ..eventlog import create_replay_entry, diff_snapshots
from ..eventlog.entries import recorded_state_hash
from ..runtime import parse_agent_event
from ..runtime.effects import DONE_PREFIX, completion_site, to_done_event, to_error_event
from .aio import run_sync
from .frames import ReplaySource, open_source, taken_ids, value_text
from .pending import AFTER_PREFIX, Pending, PendingIndex

__all__ = [
    "AppendResult",
    "Branch",
    "BranchComparison",
    "Lineage",
    "adopt_thread",
    "common_prefix",
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


def _refuse(message: str, **context: Any) -> AgentInvalidEventPayloadError:
    return AgentInvalidEventPayloadError(message, **context)


def validate_event(
    machine: Any, snapshot: Any, event: Any, pending: Pending | None = None
) -> dict[str, Any]:
    """The event as the machine will see it.

    Host events go through `parse_agent_event` (schemas applied, `xstate.*` and `@agent.*` refused: a route
    handler must never let a client forge a completion). A what-if branch may also complete what is pending
    at its last index, through a separate check: `xstate.done.actor.<id>` / `xstate.error.actor.<id>` for a
    child in flight (the error normalised to `{name, message, cause?}`) and `xstate.after.<delay>.<stateId>`
    for a timer armed and not yet fired. Reserved `@agent.*` types are always refused.
    """
    if not isinstance(event, Mapping) or not isinstance(event.get("type"), str) or not event.get("type"):
        raise _refuse(f"branch.append expects an event dict with a non-empty string 'type', got {event!r:.200}")
    event_type: str = event["type"]
    if event_type.startswith("@agent."):
        raise _refuse(
            f"branch.append cannot append the reserved event type {event_type!r}: "
            "@agent.* entries are written by the runtime",
            event_type=event_type,
        )
    if event_type.startswith("xstate."):
        return _validate_internal(event_type, event, pending)
    parsed = parse_agent_event(snapshot if snapshot is not None else machine, dict(event))
    return dict(parsed)


def _validate_internal(event_type: str, event: Mapping[str, Any], pending: Pending | None) -> dict[str, Any]:
    where = f"after index {pending.index}" if pending is not None else "here"
    site = completion_site(event_type)
    if site is not None:
        done = event_type.startswith(DONE_PREFIX)
        child = pending.child(site) if pending is not None else None
        if child is None:
            flying = ", ".join(c.id for c in pending.inflight) if pending is not None else ""
            raise _refuse(
                f"{event_type!r} completes child {site!r}, which is not in flight {where}"
                + (f" (in flight: {flying})" if flying else " (no child is in flight)"),
                event_type=event_type,
            )
        if done:
            output = event.get("output")
            if child.kind == "text" and not (isinstance(output, Mapping) and isinstance(output.get("text"), str)):
                raise _refuse(
                    f"{event_type!r}: a text request's output must be an object with a string 'text', "
                    f"got {output!r:.120}",
                    event_type=event_type,
                    fields=["output.text"],
                )
            parsed = to_done_event(site, output)
        else:
            if "error" not in event:
                raise _refuse(f"{event_type!r} needs an 'error' (a message or {{name, message}})", event_type=event_type)
            parsed = to_error_event(site, event["error"])
        try:
            assert_json_serializable(parsed, "event")
        except AgentError as error:
            raise _refuse(f"{event_type!r} is not strict JSON: {error}", event_type=event_type) from None
        return parsed
    if event_type.startswith(AFTER_PREFIX):
        armed = pending.timer_events() if pending is not None else set()
        if event_type not in armed:
            raise _refuse(
                f"timer {event_type!r} is not pending {where}"
                + (f" (pending: {', '.join(sorted(armed))})" if armed else " (no timer is armed)"),
                event_type=event_type,
            )
        return {"type": event_type}
    raise _refuse(
        f"{event_type!r} is an engine event a branch cannot append: only xstate.done.actor.<id>, "
        "xstate.error.actor.<id> (children in flight) and xstate.after.<delay>.<stateId> (pending timers)",
        event_type=event_type,
    )


class Branch:
    """One line of a run: the recording itself (the root) or a fork of a line, which can grow.

    `branch.parent` and `branch.forked_at` give the lineage (`forked_at` = the number of entries shared with
    the parent); `branch.fork(at)` forks again; `branch.append(event)` folds the event and journals it with
    its hash; `branch.diff(other)` says where two lines part. The root is never appended to.
    """

    def __init__(
        self,
        machine: Any,
        entries: Sequence[Mapping[str, Any]],
        *,
        forked_at: int,
        parent: Branch | None = None,
        parent_thread_id: str | None = None,
        store: Any = None,
        thread_id: str | None = None,
        source: ReplaySource | None = None,
        pending: PendingIndex | None = None,
        check_version: bool = True,
        name: str | None = None,
        root: bool = False,
        own_entries: bool = False,
    ) -> None:
        self.machine = machine
        self.check_version = check_version
        # The root reads the recording as it is; a fork's list is its own (`own_entries`: the caller made it),
        # its entry dicts shared with the parent (entries are never mutated).
        self.entries: list[dict[str, Any]] = (
            entries if (root or own_entries) and isinstance(entries, list) else [dict(e) for e in entries]
        )
        self.forked_at = forked_at
        self.parent = parent
        self.parent_thread_id: str | None = parent_thread_id or (parent.thread_id if parent is not None else None)
        self.store = store
        self.thread_id: str | None = thread_id
        self.is_root = root
        self.source: ReplaySource = (
            source if source is not None else open_source(machine, self.entries, check_version=check_version)
        )
        self._pending = pending
        self.appended: list[AppendResult] = []
        self.children: list[Branch] = []
        self._counter = itertools.count(1) if parent is None else None
        self.serial = 0 if parent is None else next(self._root()._counter_iter())  # creation order in the tree
        self.name = name or ("run" if parent is None else f"fork-{self.serial}")

    @classmethod
    def of_run(
        cls,
        machine: Any,
        entries: list[dict[str, Any]],
        source: ReplaySource,
        *,
        store: Any = None,
        thread_id: str | None = None,
        check_version: bool = True,
    ) -> Branch:
        """The recording as the root of its lineage: no copy of its entries, its timeline shared.

        Its pending index exists from the start (it folds nothing until asked), so a background builder and
        the cursor never race to create two."""
        return cls(
            machine,
            entries,
            forked_at=len(entries),
            store=store,
            thread_id=thread_id,
            source=source,
            pending=PendingIndex(machine, entries, check_version=check_version),
            check_version=check_version,
            root=True,
        )

    def _root(self) -> Branch:
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    def _counter_iter(self) -> Any:
        assert self._counter is not None
        return self._counter

    @property
    def root(self) -> Branch:
        return self._root()

    @property
    def pending_index(self) -> PendingIndex:
        """Timers, children in flight and owed effects after any entry of this line (checkpointed)."""
        if self._pending is None:
            if self.parent is not None:  # share the parent's checkpoints below the cut
                self._pending = PendingIndex.fork(self.parent.pending_index, self.entries, self.forked_at)
            else:
                self._pending = PendingIndex(self.machine, self.entries, check_version=self.check_version)
        return self._pending

    def pending(self, at: int | None = None) -> Pending:
        return self.pending_index.at(len(self.entries) - 1 if at is None else at)

    def fork(self, at: int | None = None, *, new_thread_id: str | None = None) -> Branch:
        """Fork `[0, at)` of this line (default: all of it): through `store.fork` when the line lives in a
        store, else a copy of the entry list. The fork's timeline and pending index share this line's
        checkpoints, so nothing is refolded and no recorded completion is re-executed."""
        entries = self.entries
        at = len(entries) if at is None else at
        if not isinstance(at, int) or isinstance(at, bool) or not 1 <= at <= len(entries):
            raise AgentError(
                f"fork(at={at!r}) must keep the init entry and stay inside the log: 1 <= at <= {len(entries)}",
                code="invalid-fork-index",
            )
        thread_id, forked = None, None
        if self.store is not None and self.thread_id is not None:
            thread_id = new_thread_id or f"{self.thread_id}~fork{at}-{uuid.uuid4().hex[:8]}"
            source_thread = self.thread_id
            run_sync(lambda: self.store.fork(thread_id=source_thread, new_thread_id=thread_id, up_to_index=at))
            forked = list(run_sync(lambda: self.store.read(thread_id)))
            if len(forked) != at:
                raise AgentStoreError(
                    f"store.fork of {source_thread!r} up to {at} gave {len(forked)} entries on {thread_id!r}"
                )
        prefix = forked if forked is not None else list(entries[:at])
        share = getattr(self.source, "fork", None)
        source = share(at) if callable(share) else None
        branch = Branch(
            self.machine,
            prefix,
            forked_at=at,
            parent=self,
            store=self.store if thread_id is not None else None,
            thread_id=thread_id,
            source=source,
            check_version=self.check_version,
            own_entries=True,
        )
        if source is not None and forked is not None:
            # The timeline copied the parent's entries; the branch journals what the store holds.
            branch.entries = forked
        self.children.append(branch)
        return branch

    def descendants(self) -> list[Branch]:
        """Every fork below this line (forks of forks too), in the order they were made."""
        out: list[Branch] = []
        stack = list(self.children)
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(node.children)
        return sorted(out, key=lambda b: b.serial)

    def lineage(self) -> list[Branch]:
        """This line and its ancestors, root first."""
        chain = [self]
        while chain[-1].parent is not None:
            chain.append(chain[-1].parent)
        return chain[::-1]

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def snapshot(self) -> Any:
        return self.source.state_at(len(self.entries) - 1)

    def append(self, event: Mapping[str, Any], *, causation_id: str | None = None) -> AppendResult:
        """Fold `event` onto the branch's last state, journal it with its state hash, say if it was ignored.

        Host events are parsed by the machine's schemas; completions of children in flight and firings of
        pending timers are accepted too (see `validate_event`). An ignored event (no enabled transition in
        that state) is still journaled, as a live run would accept it; `result.ignored` and
        `result.message` say so plainly.
        """
        if self.is_root:
            raise AgentError(
                "the recorded run is never appended to; fork it first: explorer.fork(at=...).append(event)",
                code="invalid-argument",
            )
        before = self.snapshot
        pending = self.pending()
        parsed = validate_event(self.machine, before, event, pending)
        if causation_id is None:
            causation_id = _causation(parsed["type"], pending)
        after, _actions, trace = transition_with_trace(self.machine, before, parsed)
        taken = taken_ids(trace)
        index = len(self.entries)
        entry = dict(create_replay_entry(self.machine, parsed, index, snapshot_after=after, causation_id=causation_id))
        if self.store is not None and self.thread_id is not None:
            run_sync(lambda: self.store.append(thread_id=self.thread_id, expected_index=index, entries=[entry]))
        self.entries.append(entry)
        appender = getattr(self.source, "append", None)
        if callable(appender):
            appender(entry)
        else:  # a source that cannot grow is rebuilt over the longer list
            self.source = open_source(self.machine, self.entries, check_version=self.check_version)
        persisted = self.machine.get_persisted_snapshot(after)
        value = persisted.get("value")
        recorded = recorded_state_hash(entry) or state_hash(persisted)
        # An unhandled actor error takes no transition yet stops the machine (status "error"), as in XState.
        status_changed = _get(after, "status") != _get(before, "status")
        ignored = not taken and not status_changed
        where = value_text(_get(before, "value"))
        message = (
            f"{parsed['type']!r} is ignored in state {where!r}: no enabled transition; the state is unchanged"
            if ignored
            else f"{parsed['type']!r} at index {index}: {where!r} -> {value_text(value)!r}"
            + (f" (status {_get(after, 'status')})" if status_changed else "")
        )
        result = AppendResult(
            index=index, entry=entry, ignored=ignored, value=value, state_hash=recorded, message=message
        )
        self.appended.append(result)
        return result

    def diff(self, other: Branch) -> BranchComparison:
        """Where this line and `other` part: the first index whose states differ (or where one line ends),
        the events each line has there, and `diff_snapshots` of the two states."""
        ancestor = _shared_prefix(self, other)
        return compare_timelines(
            self.source, self.entries, other.source, other.entries, forked_at=ancestor
        )

    def to_row(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "parent": self.parent.name if self.parent is not None else None,
            "forked_at": None if self.parent is None else self.forked_at,
            "length": len(self.entries),
            "appended": len(self.appended),
            "thread_id": self.thread_id,
            "parent_thread_id": self.parent_thread_id,
        }

    def __repr__(self) -> str:
        where = f", thread={self.thread_id!r}" if self.thread_id else ""
        if self.parent is None:
            return f"Branch({self.name!r}, root, length={len(self.entries)}{where})"
        return (
            f"Branch({self.name!r}, parent={self.parent.name!r}, forked_at={self.forked_at}, "
            f"length={len(self.entries)}{where})"
        )


def common_prefix(a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]]) -> int:
    """How many leading entries two logs share verbatim (same id and event): `store.fork` copies entries as
    they are, so a thread forked from another shares exactly its fork prefix with it."""
    n = 0
    for x, y in zip(a, b, strict=False):  # logs of different lengths: the shorter bounds the prefix
        if not _same_entry(x, y):
            break
        n += 1
    return n


def adopt_thread(root: Branch, thread_id: str, entries: Sequence[Mapping[str, Any]]) -> Branch | None:
    """A store thread forked (with `store.fork`) from a line of `root`'s tree, as a Branch of that line.

    The store keeps no parentage, but a fork's entries are verbatim copies: the parent is the line sharing the
    longest prefix with the thread (the shallowest such line on a tie: a branch shares its own parent's prefix),
    and `forked_at` is that prefix's length. The branch's timeline is the parent's forked at the cut plus the
    thread's own entries (folded once, executing nothing). None when the thread shares not even the init entry.
    """
    best: tuple[int, int, Branch] | None = None
    for line in [root, *root.descendants()]:
        if line.thread_id == thread_id:
            return line
        shared = common_prefix(line.entries, entries)
        key = (shared, -len(line.lineage()))
        if shared and (best is None or key > best[:2]):
            best = (shared, key[1], line)
    if best is None:
        return None
    at, _, parent = best
    share = getattr(parent.source, "fork", None)
    source = share(at) if callable(share) else None
    if source is not None:
        for entry in entries[at:]:
            source.append(entry)
    branch = Branch(
        parent.machine,
        list(entries),
        forked_at=at,
        parent=parent,
        store=parent.store or root.store,
        thread_id=thread_id,
        source=source,
        check_version=parent.check_version,
        own_entries=True,
        name=thread_id,  # unique in its store, and what its owner knows it by
    )
    parent.children.append(branch)
    return branch


def _causation(event_type: str, pending: Pending) -> str | None:
    """The request an appended event answers, journaled as its `causationId` exactly as the runtime does: a
    completion names its child's request; an event a decision in flight may choose names the decision's."""
    if ".actor." in event_type and event_type.startswith(("xstate.done.", "xstate.error.")):
        child = pending.child(event_type.split(".actor.", 1)[1])
        return child.request_id if child is not None else None
    for effect in pending.owed:
        request = effect.request
        if effect.kind == "decision" and request is not None and event_type in (request.events or ()):
            return effect.request_id
    return None


def _shared_prefix(a: Branch, b: Branch) -> int:
    """How many entries two lines of one lineage share (their common ancestor's cut); 0 if unrelated."""
    ancestors_a = {id(node): node for node in a.lineage()}
    cut_a = {id(a): len(a.entries)}
    node = a
    while node.parent is not None:
        cut_a[id(node.parent)] = min(cut_a[id(node)], node.forked_at)
        node = node.parent
    cut_b = len(b.entries)
    node = b
    while id(node) not in ancestors_a:
        if node.parent is None:
            return 0
        cut_b = min(cut_b, node.forked_at)
        node = node.parent
    return min(cut_b, cut_a[id(node)])


class Lineage(list[Branch]):
    """The forks of a run, in the order they were made (a list, as before), with the tree they form.

    `lineage.root` is the recording; `to_pandas()` gives one row per line (name, parent, forked_at, length,
    appended, thread ids); `to_json()` is what the widget draws beside the slider.
    """

    def __init__(self, root: Branch, forks: Iterable[Branch], current: Branch | None = None) -> None:
        super().__init__(forks)
        self.root = root
        self.current = current or root

    def lines(self) -> list[Branch]:
        return [self.root, *self]

    def to_pandas(self) -> Any:
        import pandas as pd

        return pd.DataFrame(
            [b.to_row() for b in self.lines()],
            columns=["name", "parent", "forked_at", "length", "appended", "thread_id", "parent_thread_id"],
        ).astype({"forked_at": "Int64"})  # the root has no fork index: <NA>, not a float NaN

    def to_json(self) -> dict[str, Any]:
        return {
            "current": self.current.name,
            "nodes": [
                {
                    "id": b.name,
                    "parent": b.parent.name if b.parent is not None else None,
                    "forkedAt": None if b.parent is None else b.forked_at,
                    "length": len(b.entries),
                    "appended": len(b.appended),
                    "threadId": b.thread_id,
                }
                for b in self.lines()
            ],
        }

    def __repr__(self) -> str:
        lines = []
        for b in self.lines():
            depth = len(b.lineage()) - 1
            mark = "*" if b is self.current else " "
            at = "" if b.parent is None else f" forked at {b.forked_at} from {b.parent.name}"
            lines.append(f"{mark} {'  ' * depth}{b.name}: {len(b.entries)} entries{at}")
        return "\n".join(lines)


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


@dataclass
class BranchComparison:
    """Two lines side by side: the first index whose states differ (or where one ends), the events each
    line has there, and the structural state diff (`diff_snapshots`) there."""

    index: int | None
    diff: list[dict[str, Any]] = field(default_factory=list)
    length_a: int = 0
    length_b: int = 0
    forked_at: int | None = None
    reason: str = ""
    event_a: dict[str, Any] | None = None
    event_b: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "diff": self.diff,
            "lengthA": self.length_a,
            "lengthB": self.length_b,
            "forkedAt": self.forked_at,
            "reason": self.reason,
            "eventA": self.event_a,
            "eventB": self.event_b,
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
    common = min(len(a_entries), len(b_entries))
    start = 0
    while start < common and _same_entry(a_entries[start], b_entries[start]):
        start += 1
    for i in range(start, common):
        before, after = a_source.persisted_at(i), b_source.persisted_at(i)
        if before != after:
            changes = [c.to_dict() for c in diff_snapshots(before, after)]
            return BranchComparison(
                i, changes, len(a_entries), len(b_entries), forked_at, "states differ",
                _event(a_entries, i), _event(b_entries, i),
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
        _event(a_entries, common),
        _event(b_entries, common),
    )


def _event(entries: Sequence[Mapping[str, Any]], index: int) -> dict[str, Any] | None:
    return dict(entries[index]["event"]) if index < len(entries) else None


def _same_entry(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return a is b or (a.get("id") == b.get("id") and a.get("event") == b.get("event"))
