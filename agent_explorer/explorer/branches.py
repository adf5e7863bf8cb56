"""Branches: fork a recorded run at an index (and forks of forks), append what-if events, diff two lines.

A fork is the prefix `[0, at)` (exclusive, as `fork_event_log` and `store.fork`) sharing its parent's checkpoints
(nothing is refolded, no recorded completion is re-executed); appends are pure folds (no action executes)
recorded as ordinary entries with their state hash. Every branch knows its parent and fork index, so the
lineage is a tree. Forks live in memory: the parent log and the store it came from are never touched, until
the user saves a branch (`branch.save()`), which writes a new thread.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..canonical import assert_json_serializable, state_hash
from ..engine import transition_with_trace
from ..engine.values import value_text
from ..errors import AgentError, AgentInvalidEventPayloadError, AgentStoreError
from ..eventlog import create_replay_entry, diff_snapshots
from ..eventlog.entries import recorded_state_hash
from ..eventlog.fold import Step
from ..eventlog.timeline import Timeline
from ..plural import plural
from ..runtime import parse_agent_event
from ..runtime.effects import DONE_PREFIX, EffectLedger, completion_site, to_done_event, to_error_event
from .pending import AFTER_PREFIX, Pending, pending_at
from .values import taken_ids

__all__ = [
    "AppendResult",
    "Branch",
    "BranchComparison",
    "Lineage",
    "adopt_thread",
    "common_prefix",
    "compare_timelines",
    "open_line",
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


def open_line(machine: Any, entries: Sequence[Mapping[str, Any]], *, check_version: bool = True,
              verify: bool | str = True, lazy: bool = False) -> Timeline:
    """The one checkpointed fold of a line: snapshots, the effect ledger and (with `verify`) every recorded
    hash checked, in one pass; postmortem rules (an entry that cannot be folded is recorded, not raised)."""
    return Timeline(machine, entries, check_version=check_version, ledger=EffectLedger.start_from,
                    verify=verify, errors="record", lazy=lazy)


class Branch:
    """One line of a run: the recording itself (the root) or a fork of a line, which can grow.

    `branch.parent` and `branch.forked_at` give the lineage (`forked_at` = the number of entries shared with
    the parent); `branch.fork(at)` forks again; `branch.append(event)` folds the event and journals it with
    its hash; `branch.diff(other)` says where two lines part; `branch.save()` writes it to a store. A fork
    lives in memory until saved: exploring never writes to what it explores. The root is never appended to.

    `timeline` is the line's one fold (its entries are `timeline.entries`, the line's only list).
    """

    def __init__(
        self,
        machine: Any,
        timeline: Timeline,
        *,
        forked_at: int,
        parent: Branch | None = None,
        store: Any = None,
        thread_id: str | None = None,
        name: str | None = None,
    ) -> None:
        self.machine = machine
        self.timeline = timeline
        self.forked_at = forked_at
        self.parent = parent
        self.store = store
        self.thread_id: str | None = thread_id
        self.appended: list[AppendResult] = []
        self.children: list[Branch] = []
        self._serials = itertools.count(1) if parent is None else None
        self.serial = 0 if parent is None else next(self.root._next_serial())  # creation order in the tree
        self.name = name or ("recording" if parent is None else f"fork-{self.serial}")

    @classmethod
    def of_run(cls, machine: Any, timeline: Timeline, *, store: Any = None, thread_id: str | None = None,
               name: str | None = None) -> Branch:
        """The recording as the root of its lineage."""
        return cls(machine, timeline, forked_at=len(timeline), store=store, thread_id=thread_id, name=name)

    def _next_serial(self) -> Iterator[int]:
        assert self._serials is not None
        return self._serials

    @property
    def root(self) -> Branch:
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    @property
    def is_root(self) -> bool:
        return self.parent is None

    @property
    def entries(self) -> list[Mapping[str, Any]]:
        return self.timeline.entries

    @property
    def parent_thread_id(self) -> str | None:
        return self.parent.thread_id if self.parent is not None else None

    def pending(self, at: int | None = None) -> Pending:
        """Timers, children in flight and owed effects after entry `at` (default: the last) of this line."""
        return pending_at(self.timeline.point_at(len(self.entries) - 1 if at is None else at, traced=False))

    def fork(self, at: int | None = None, *, name: str | None = None) -> Branch:
        """Fork `[0, at)` of this line (default: all of it), in memory. The fork's timeline shares this line's
        checkpoints, so nothing is refolded and no recorded completion is re-executed; nothing is written
        anywhere until `save()`."""
        entries = self.entries
        at = len(entries) if at is None else at
        if not isinstance(at, int) or isinstance(at, bool) or not 1 <= at <= len(entries):
            raise AgentError(
                f"fork(at={at!r}) must keep the init entry and stay inside the log: 1 <= at <= {len(entries)}",
                code="invalid-fork-index",
            )
        if name is not None:
            taken = {line.name for line in [self.root, *self.root.descendants()]}
            if name in taken:
                raise AgentError(f"a line named {name!r} exists already; names are unique in a lineage",
                                 code="invalid-argument")
        branch = Branch(self.machine, self.timeline.fork(at), forked_at=at, parent=self, name=name)
        self.children.append(branch)
        return branch

    def save(self, store: Any = None, thread_id: str | None = None) -> str:
        """Write this line to a store thread (default: the recording's store, thread `<recording>~<name>`);
        returns the thread id. The thread must be new: a save never changes what a store already holds.

        The entries go in one append (atomic), verbatim: the shared prefix keeps its ids, so the thread is
        recognised as a fork of the recording when opened again (`Explorer.add_thread`). A read-only store
        (an explorer opened from one, as `agent-explorer open` does) is refused: AgentStoreError, code
        `store-read-only`; the fork stays in memory."""
        target = store if store is not None else self.root.store
        if target is None:
            raise AgentError(
                "branch.save() needs a store: pass store=... (the explorer was not opened from a store)",
                code="invalid-argument",
            )
        if getattr(target, "read_only", False):
            raise AgentStoreError(
                f"branch.save() needs a store opened for writing; {target!r} is read-only (as the notebook "
                "`agent-explorer open` writes opens it): pass store=open_store(URL) to save the fork there",
                code="store-read-only",
            )
        thread = thread_id or f"{self.root.thread_id or self.root.name}~{self.name}"
        target.sync.append(thread_id=thread, expected_index=0, entries=list(self.entries))
        self.store, self.thread_id = target, thread
        return thread

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
        return self.timeline.state_at(len(self.entries) - 1)

    def append(self, event: Mapping[str, Any], *, causation_id: str | None = None) -> AppendResult:
        """Fold `event` onto the branch's last state, journal it with its state hash, say if it was ignored.

        Host events are parsed by the machine's schemas; completions of children in flight and firings of
        pending timers are accepted too (see `validate_event`). An ignored event (no enabled transition in
        that state) is still journaled, as a live run would accept it; `result.ignored` and
        `result.message` say so plainly. In memory: a saved branch is not updated (save it again elsewhere).
        """
        if self.is_root:
            raise AgentError(
                "the recorded run is never appended to; fork it first: explorer.fork(at=...).append(event)",
                code="invalid-argument",
            )
        index = len(self.entries)
        before = self.snapshot
        pending = self.pending()
        parsed = validate_event(self.machine, before, event, pending)
        if causation_id is None:
            causation_id = _causation(parsed["type"], pending)
        # One traced engine call: its snapshot is hashed into the entry and handed to the timeline as is.
        after, actions, trace = transition_with_trace(self.machine, before, parsed)
        entry = dict(create_replay_entry(self.machine, parsed, index, snapshot_after=after, causation_id=causation_id))
        self.timeline.append(entry, folded=Step(index, entry, after, list(actions), after is not before, trace))
        persisted = self.machine.get_persisted_snapshot(after)
        value = persisted.get("value")
        recorded = recorded_state_hash(entry) or state_hash(persisted)
        # An unhandled actor error takes no transition yet stops the machine (status "error"), as in XState.
        status_changed = _get(after, "status") != _get(before, "status")
        ignored = not taken_ids(trace) and not status_changed
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
        return compare_timelines(self.timeline, other.timeline, forked_at=ancestor)

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
    """A store thread forked (with `store.fork`, or saved with `branch.save`) from a line of `root`'s tree, as a
    Branch of that line.

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
    timeline = parent.timeline.fork(at)
    timeline.extend(entries[at:])
    branch = Branch(
        parent.machine, timeline, forked_at=at, parent=parent, store=root.store, thread_id=thread_id,
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
            lines.append(f"{mark} {'  ' * depth}{b.name}: {plural(len(b.entries), 'entry', 'entries')}{at}")
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


def compare_timelines(a: Timeline, b: Timeline, *, forked_at: int | None = None) -> BranchComparison:
    """First index where the two lines' states differ (or where one line ends), with `diff_snapshots` there.

    Entries shared verbatim (same id and event) fold to the same state, so the walk skips them without
    replaying; from the first differing entry on it compares persisted snapshots.
    """
    a_entries, b_entries = a.entries, b.entries
    common = min(len(a_entries), len(b_entries))
    start = 0
    while start < common and _same_entry(a_entries[start], b_entries[start]):
        start += 1
    for i in range(start, common):
        before, after = a.persisted_at(i), b.persisted_at(i)
        if before != after:
            changes = [c.to_dict() for c in diff_snapshots(before, after)]
            return BranchComparison(
                i, changes, len(a_entries), len(b_entries), forked_at, "states differ",
                _event(a_entries, i), _event(b_entries, i),
            )
    if len(a_entries) == len(b_entries):
        return BranchComparison(None, [], len(a_entries), len(b_entries), forked_at, "identical states")
    return BranchComparison(
        common, [], len(a_entries), len(b_entries), forked_at, f"one run ends at index {common - 1}",
        _event(a_entries, common), _event(b_entries, common),
    )


def _event(entries: Sequence[Mapping[str, Any]], index: int) -> dict[str, Any] | None:
    return dict(entries[index]["event"]) if index < len(entries) else None


def _same_entry(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return a is b or (a.get("id") == b.get("id") and a.get("event") == b.get("event"))
