"""The one fold of a log through a machine: every loop over entries in the package goes through `fold`.

(One loop applies these rules inline for speed: the verifying fold, verifying_fold.py, folds an ordinary
entry itself and hands every other one to `fold`; tests/replay/test_verifying_fold.py holds it to `fold`.)

Job: seed from the `@agent.init` entry, then turn each later entry into one `Step` (the snapshot after it,
the actions its transition returned, its microstep trace when asked), with one set of rules for every
consumer (replay, verification, Timeline, the snapshot cache, machine comparison, search, coverage, the
runtime's effect ledger). Pure: never executes an action, reads a clock, or mutates an entry.

The rules, in one place:
- A log starts with its `@agent.init` entry; otherwise `AgentLogFormatError` (code `log-format`, index 0).
  With `event.snapshot` the init entry restores that snapshot (no actions: a restore owes nothing by
  itself) and is exempt from the version check (it is the version bridge); otherwise `event.input` goes
  through `initial_transition`.
- An entry stamped with another `machineId`/`machineVersion` raises `AgentMachineVersionMismatchError`
  before it is folded (`check_version=False` folds a log through a machine that did not record it).
- `@agent.usage` entries are journaled spend: they never transition (`actions` is None).
- A second `@agent.init` later in the log is `AgentLogFormatError` at its index: a log holds one segment.
- An event the state ignores leaves the very same snapshot object (`changed` is False), so consumers
  that hash can keep the previous hash.
- `errors="record"` (postmortems) turns a malformed entry, a late init or an exception raised by the
  machine into a Step with `.error` set and the state unchanged, and folds on; `"raise"` raises them
  (a version mismatch always raises: it is a precondition, not a finding).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Literal, Protocol

from ..engine import initial_transition, transition, transition_with_trace
from ..errors import AgentError, AgentLogFormatError, AgentMachineVersionMismatchError
from .entries import INIT_EVENT_TYPE, USAGE_EVENT_TYPE, assert_agent_log_entry

__all__ = [
    "FoldErrors",
    "Ledger",
    "LedgerFactory",
    "Step",
    "check_entry_machine",
    "fold",
    "require_init_entry",
    "seed",
    "strip_agent_meta",
]

FoldErrors = Literal["raise", "record"]


class Step:
    """One entry folded: `snapshot` is the state after it; `actions` what its transition returned
    (None when no transition ran: a usage entry, or an entry recorded as an error); `changed` whether
    the snapshot is a new object; `trace` its microsteps (`{event, transitions, exited, entered}`) when
    the fold traces; `error` the problem found at this entry under `errors="record"`."""

    __slots__ = ("actions", "changed", "entry", "error", "index", "snapshot", "trace")

    def __init__(
        self,
        index: int,
        entry: Mapping[str, Any],
        snapshot: Any,
        actions: list[Any] | None,
        changed: bool,
        trace: list[dict[str, Any]] | None = None,
        error: Exception | None = None,
    ) -> None:
        self.index = index
        self.entry = entry
        self.snapshot = snapshot
        self.actions = actions
        self.changed = changed
        self.trace = trace
        self.error = error

    @property
    def event(self) -> Any:
        return self.entry.get("event") if isinstance(self.entry, Mapping) else None

    @property
    def event_type(self) -> str | None:
        event = self.event
        kind = event.get("type") if isinstance(event, Mapping) else None
        return kind if isinstance(kind, str) else None

    @property
    def transitioned(self) -> bool:
        """A transition ran for this entry (it may still have taken none: an ignored event)."""
        return self.actions is not None

    def __repr__(self) -> str:
        problem = f", error={type(self.error).__name__}" if self.error is not None else ""
        return f"Step({self.index}, {self.event_type!r}, changed={self.changed}{problem})"


class Ledger(Protocol):
    """What a fold may carry alongside the machine: the runtime's effect ledger (what is owed).

    The log layer sits below the runtime, so it never builds one: a caller passes a `LedgerFactory`
    (e.g. `agent_explorer.runtime.effects.EffectLedger.start_from`) and the fold steps it with every entry.
    """

    def step(self, step: Step) -> None:
        """Take one folded entry (after the init, which the factory took)."""

    def copy(self) -> Ledger:
        """An independent ledger in the same state (checkpoints and caches keep copies)."""

    def owed(self) -> list[Any]:
        """What is still owed after the last entry taken."""


LedgerFactory = Callable[[Any, Step], Ledger]
"""`factory(machine, init_step) -> Ledger`: a ledger seeded from a log's init step."""


def require_init_entry(entry: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The first entry, or `AgentLogFormatError` saying why the log cannot be seeded."""
    if entry is None:
        raise AgentLogFormatError(
            "Cannot replay an empty log: a log starts with its @agent.init entry "
            "(build one with init_entry(machine, input=...)).",
            index=0,
        )
    event = entry.get("event") if isinstance(entry, Mapping) else None
    event_type = event.get("type") if isinstance(event, Mapping) else None
    if event_type != INIT_EVENT_TYPE:
        raise AgentLogFormatError(
            f"Entry 0 has event type {event_type!r}, but a log must start with its "
            f"{INIT_EVENT_TYPE} entry: replay rejects a log without one, because a suffix cannot "
            "be folded without the state it started from. Keep the init entry when cutting logs "
            "(fork_event_log keeps it).",
            index=0,
        )
    return entry


def check_entry_machine(machine: Any, entry: Mapping[str, Any], index: int) -> None:
    """Raise `AgentMachineVersionMismatchError` if `entry` was recorded by another machine."""
    if entry.get("machineVersion") != machine.version or entry.get("machineId") != machine.id:
        raise version_mismatch(machine, entry, index)


def version_mismatch(machine: Any, entry: Mapping[str, Any], index: int) -> AgentMachineVersionMismatchError:
    return AgentMachineVersionMismatchError(
        f"Entry {index} (id {entry.get('id')!r}) was recorded by machine {entry.get('machineId')!r} "
        f"version {entry.get('machineVersion')!r}, but it is being replayed by machine "
        f"{machine.id!r} version {machine.version!r}. A log is truth within one machine version: "
        "replay it with the machine that recorded it, or carry it over with "
        "bridge_version(machine, old_entries, old_snapshot).",
        index=index,
        entry_id=entry.get("id"),
        machine_id=machine.id,
        machine_version=machine.version,
        entry_machine_id=entry.get("machineId"),
        entry_machine_version=entry.get("machineVersion"),
    )


def late_init(entry: Mapping[str, Any], index: int) -> AgentLogFormatError:
    return AgentLogFormatError(
        f"Entry {index} (id {entry.get('id')!r}) is a second {INIT_EVENT_TYPE} entry; a log "
        "holds exactly one, at index 0. A version bridge starts a new log: keep the segments apart.",
        index=index,
    )


def malformed(entry: Any, index: int, error: Exception) -> AgentLogFormatError:
    """The log-format error for an entry whose fields could not be read (KeyError/TypeError)."""
    if not isinstance(entry, Mapping):
        return AgentLogFormatError(f"Entry {index} is a {type(entry).__name__}, not a JSON object.", index=index)
    try:
        assert_agent_log_entry(dict(entry), index=index)
    except AgentLogFormatError as format_error:
        return format_error
    except AgentError:
        pass
    return AgentLogFormatError(
        f"Entry {index} (id {entry.get('id')!r}) is malformed: {type(error).__name__}: {error}. An entry "
        "needs machineId, machineVersion, event.type and, if present, verification.stateHash.",
        index=index,
    )


def strip_agent_meta(persisted: Mapping[str, Any]) -> dict[str, Any]:
    """The persisted snapshot without the cache's `agentMeta` (it is not machine state)."""
    return {key: value for key, value in persisted.items() if key != "agentMeta"}


def seed(
    machine: Any, entry: Mapping[str, Any] | None, *, check_version: bool = True, trace: bool = False
) -> Step:
    """The init step a fold starts from (index 0): restored from `event.snapshot`, else entered from
    `event.input` through `initial_transition` (traced when asked)."""
    first = require_init_entry(entry)
    event = first["event"]
    if event.get("snapshot") is not None:
        persisted = event["snapshot"]
        if not isinstance(persisted, Mapping):
            raise AgentLogFormatError(
                f"Entry 0 (id {first.get('id')!r}) carries a snapshot that is not a JSON object "
                f"({type(persisted).__name__}); a persisted snapshot is an object with status, value, context.",
                index=0,
            )
        # A restore enters nothing: it already is its configuration, so its trace is empty.
        return Step(0, first, machine.restore_snapshot(strip_agent_meta(persisted)), [], True, [] if trace else None)
    if check_version:
        check_entry_machine(machine, first, 0)
    if trace:
        snapshot, actions, steps = transition_with_trace(machine, None, input=event.get("input"))
        return Step(0, first, snapshot, list(actions), True, steps)
    snapshot, actions = initial_transition(machine, input=event.get("input"))
    return Step(0, first, snapshot, list(actions), True)


def fold(
    machine: Any,
    entries: Iterable[Mapping[str, Any]],
    *,
    start: Step | tuple[int, Any] | None = None,
    check_version: bool = True,
    trace: bool = False,
    errors: FoldErrors = "raise",
) -> Iterator[Step]:
    """One `Step` per entry, lazily (stream a file with `fold(m, iter_log(path))`).

    Without `start` the first entry is the init entry and the first Step is its seed (index 0). With
    `start` (a Step, or `(index, snapshot)`), `entries` are the ones after that index and folding goes
    on from its snapshot: how a checkpoint, a cache or a growing log continues without refolding.
    `trace=True` records each transition's microsteps (`Step.trace`) in the same engine call.
    """
    record = errors == "record"
    if errors not in ("raise", "record"):  # before anything is folded or yielded
        raise AgentError(f"errors must be 'raise' or 'record', not {errors!r}.", code="invalid-argument")
    iterator = iter(entries)
    if start is None:
        first = seed(machine, next(iterator, None), check_version=check_version, trace=trace)
        yield first
        index, snapshot = 0, first.snapshot
    elif isinstance(start, Step):
        index, snapshot = start.index, start.snapshot
    else:
        index, snapshot = start
    machine_id, machine_version = machine.id, machine.version
    # The hot loop: locals only; only the reads of the entry itself are guarded, so an exception from
    # machine code propagates as is (or is recorded).
    for entry in iterator:
        index += 1
        try:
            event = entry["event"]
            event_type = event["type"]
            same = not check_version or (
                entry["machineVersion"] == machine_version and entry["machineId"] == machine_id
            )
            if not isinstance(event_type, str):
                raise TypeError(f"event.type is a {type(event_type).__name__}, not a string")
        except (KeyError, TypeError, AttributeError) as error:
            problem = malformed(entry, index, error)
            if not record:
                raise problem from error
            yield Step(index, entry, snapshot, None, False, None, problem)
            continue
        if not same:
            raise version_mismatch(machine, entry, index)
        if event_type == USAGE_EVENT_TYPE:
            yield Step(index, entry, snapshot, None, False, [] if trace else None)
            continue
        if event_type == INIT_EVENT_TYPE:
            if not record:
                raise late_init(entry, index)
            yield Step(index, entry, snapshot, None, False, None, late_init(entry, index))
            continue
        try:
            if trace:
                after, actions, steps = transition_with_trace(machine, snapshot, event)
            else:
                after, actions = transition(machine, snapshot, event)
                steps = None
        except Exception as error:  # noqa: BLE001 - recorded only when asked; raised as is otherwise
            if not record:
                raise
            yield Step(index, entry, snapshot, None, False, None, error)
            continue
        yield Step(index, entry, after, actions, after is not snapshot, steps)
        snapshot = after
