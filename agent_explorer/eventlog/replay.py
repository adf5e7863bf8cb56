"""Pure replay: fold an event log through a machine back into the state it records.

Job: seed from the `@agent.init` entry (input -> `initial_transition`, snapshot ->
`restore_snapshot`), fold each later entry's event with the engine's pure `transition`, and check
`verification.stateHash` on the way (docs/semantics/replay.md "Fold rules", "Verify modes"). Must never
execute an action, call a model, read a clock, or mutate an entry. The fold helpers here
(`seed`, `check_entry_machine`, ...) are shared by verification, timeline, diff and the snapshot
cache so that every fold in the package obeys the same rules.

Rules, in one place:
- A log must start with an `@agent.init` entry; otherwise `AgentLogFormatError` (code
  `log-format`, `index=0`). A second `@agent.init` later in the log is the same error at its
  index: a log holds one segment (a version bridge starts a new log).
- An entry stamped with another `machineId`/`machineVersion` than the replaying machine raises
  `AgentMachineVersionMismatchError` before it is folded; the init entry that carries a snapshot
  is exempt (it is the version bridge).
- `@agent.usage` entries are journaled spend: they never transition and carry the hash of the
  unchanged state.
- Error `index` values are positions in the given sequence (equal to `entry["index"]` for a
  well-formed log).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

from ..canonical.jcs import state_hash
from ..engine import initial_transition, transition, transition_with_trace
from ..errors import (
    AgentError,
    AgentLogFormatError,
    AgentMachineVersionMismatchError,
    AgentReplayDivergenceError,
)
from .entries import INIT_EVENT_TYPE, USAGE_EVENT_TYPE, assert_agent_log_entry, recorded_state_hash

__all__ = [
    "EffectsProvider",
    "ReplayResult",
    "VerifyMode",
    "check_entry_machine",
    "find_effects_provider",
    "is_usage_event",
    "register_effects_provider",
    "replay",
    "seed",
    "strip_agent_meta",
    "trace_transition",
]

VerifyMode = bool | Literal["strict"]
EffectsProvider = Callable[[Any, Any, Sequence[Any], Sequence[Mapping[str, Any]]], list[Any]]
"""`provider(machine, snapshot, actions, entries) -> effects` (the runtime's get_agent_effects)."""

_effects_provider: EffectsProvider | None = None
# Where the runtime layer publishes get_agent_effects (docs/api.md §4). Looked up lazily, and only
# when `.effects` is read, so the log layer never imports the runtime at import time.
_EFFECTS_MODULES = ("agent_explorer.steps", "agent_explorer.runtime.steps")


def register_effects_provider(provider: EffectsProvider | None) -> None:
    """Let the runtime layer say how owed effects are derived (None unregisters).

    The log layer sits below the runtime (docs/design.md "Layers"), so it cannot import `get_agent_effects`;
    the runtime's `steps` module registers it here on import instead.
    """
    global _effects_provider
    _effects_provider = provider


def find_effects_provider() -> EffectsProvider | None:
    """The registered provider, else `get_agent_effects` of an importable runtime, else None."""
    if _effects_provider is not None:
        return _effects_provider
    for name in _EFFECTS_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        provider = getattr(module, "get_agent_effects", None)
        if provider is not None:
            return _adapt_runtime_provider(provider)
    return None


def _adapt_runtime_provider(get_agent_effects: Callable[..., list[Any]]) -> EffectsProvider:
    def provider(machine: Any, snapshot: Any, actions: Sequence[Any], entries: Sequence[Any]) -> list[Any]:
        history = [entry["event"] for entry in entries]
        return list(get_agent_effects(machine, snapshot, actions, history=history))

    return provider


class ReplayResult:
    """What a log folds to: `.snapshot` (engine Snapshot), `.persisted_snapshot` (its JSON).

    `.effects` is what is still owed at the frontier, derived by the runtime layer's
    `get_agent_effects` from the final snapshot and the actions of the last transition. It is
    computed on first read through the registered effects provider (see
    `register_effects_provider`); when no runtime is installed it is `[]`. Nothing executes.
    `.actions` are the actions the last folded transition returned (unexecuted), `.length` the
    number of entries folded, `.checked` how many state hashes were verified.
    """

    __slots__ = ("machine", "snapshot", "actions", "length", "checked", "_entries", "_persisted", "_effects")

    def __init__(
        self,
        machine: Any,
        snapshot: Any,
        actions: Sequence[Any],
        length: int,
        checked: int,
        entries: Sequence[Mapping[str, Any]] | None,
        persisted: dict[str, Any] | None,
    ) -> None:
        self.machine = machine
        self.snapshot = snapshot
        self.actions = list(actions)
        self.length = length
        self.checked = checked
        self._entries = entries
        self._persisted = persisted
        self._effects: list[Any] | None = None

    @property
    def persisted_snapshot(self) -> dict[str, Any]:
        if self._persisted is None:
            self._persisted = self.machine.get_persisted_snapshot(self.snapshot)
        return self._persisted

    @property
    def state_hash(self) -> str:
        """`state_hash(persisted_snapshot)`: what the tail entry's stateHash should be."""
        return state_hash(self.persisted_snapshot)

    @property
    def effects(self) -> list[Any]:
        if self._effects is None:
            provider = find_effects_provider()
            entries = self._entries if self._entries is not None else []
            self._effects = [] if provider is None else provider(self.machine, self.snapshot, self.actions, entries)
        return self._effects

    def __repr__(self) -> str:
        value = getattr(self.snapshot, "value", None)
        status = getattr(self.snapshot, "status", None)
        return f"ReplayResult(length={self.length}, status={status!r}, value={value!r}, checked={self.checked})"


# ---------------------------------------------------------------------------------------------
# Fold rules shared by every fold in the package.


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
        raise _version_mismatch(machine, entry, index)


def _version_mismatch(machine: Any, entry: Mapping[str, Any], index: int) -> AgentMachineVersionMismatchError:
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


def is_usage_event(event: Mapping[str, Any]) -> bool:
    return event.get("type") == USAGE_EVENT_TYPE


def reject_late_init(event: Mapping[str, Any], entry: Mapping[str, Any], index: int) -> None:
    if event.get("type") == INIT_EVENT_TYPE:
        raise AgentLogFormatError(
            f"Entry {index} (id {entry.get('id')!r}) is a second {INIT_EVENT_TYPE} entry; a log "
            "holds exactly one, at index 0. A version bridge starts a new log: keep the segments apart.",
            index=index,
        )


def strip_agent_meta(persisted: Mapping[str, Any]) -> dict[str, Any]:
    """The persisted snapshot without the cache's `agentMeta` (it is not machine state)."""
    return {key: value for key, value in persisted.items() if key != "agentMeta"}


def seed(machine: Any, entry: Mapping[str, Any], *, check_version: bool = True) -> tuple[Any, list[Any]]:
    """The (snapshot, actions) an init entry starts a fold from.

    With `event.snapshot` the snapshot is restored purely (no actions: nothing is owed by a
    restore itself) and the entry is exempt from the version check; otherwise `event.input`
    goes through `initial_transition`.
    """
    require_init_entry(entry)
    event = entry["event"]
    if "snapshot" in event and event["snapshot"] is not None:
        persisted = event["snapshot"]
        if not isinstance(persisted, Mapping):
            raise AgentLogFormatError(
                f"Entry 0 (id {entry.get('id')!r}) carries a snapshot that is not a JSON object "
                f"({type(persisted).__name__}); a persisted snapshot is an object with status, value, context.",
                index=0,
            )
        return machine.restore_snapshot(strip_agent_meta(persisted)), []
    if check_version:
        check_entry_machine(machine, entry, 0)
    snapshot, actions = initial_transition(machine, input=event.get("input"))
    return snapshot, list(actions)


def trace_transition(machine: Any, snapshot: Any, event: dict[str, Any]) -> list[dict[str, Any]]:
    """The microsteps of one transition (engine's `transition_with_trace`)."""
    _, _, trace = transition_with_trace(machine, snapshot, event)
    return [dict(step) for step in trace]


def _check_verify_mode(verify: Any) -> VerifyMode:
    if verify is True or verify is False or verify == "strict":
        return verify  # type: ignore[no-any-return]
    raise AgentError(
        f"verify must be True, False or 'strict', not {verify!r}.", code="invalid-verify-mode"
    )


def _state_divergence(
    entry: Mapping[str, Any], index: int, expected: str, actual: str
) -> AgentReplayDivergenceError:
    event = entry.get("event")
    event_type = event.get("type") if isinstance(event, Mapping) else None
    return AgentReplayDivergenceError(
        f"Replay diverged at entry {index} (id {entry.get('id')!r}, event {event_type!r}): the log "
        f"recorded stateHash {expected}, the fold derived {actual}. The machine no longer derives "
        "the recorded state: a guard, action or input builder is impure (time, randomness) or its "
        "semantics changed without a version bump, or the entry was edited. verify_log(machine, "
        "entries) lists every divergence; compare_machines(old, new, entries) shows why.",
        event_id=entry.get("id"),
        index=index,
        kind="state",
        expected_hash=expected,
        actual_hash=actual,
        event=event,
    )


def _missing_verification(entry: Mapping[str, Any], index: int) -> AgentReplayDivergenceError:
    return AgentReplayDivergenceError(
        f"Entry {index} (id {entry.get('id')!r}) carries no verification.stateHash, and "
        "verify='strict' requires one on every entry. Re-record with hashing on, or replay with "
        "verify=True to check only the entries that carry one.",
        event_id=entry.get("id"),
        index=index,
        kind="missing-verification",
        event=entry.get("event"),
    )


def _malformed(entry: Any, index: int, error: Exception) -> AgentLogFormatError:
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


# ---------------------------------------------------------------------------------------------


def replay(
    machine: Any,
    entries: Iterable[Mapping[str, Any]],
    verify: VerifyMode = True,
) -> ReplayResult:
    """Fold `entries` through `machine`; nothing executes. `replay(m, entries[:n])` is time travel.

    `verify=True` checks every entry that carries `verification.stateHash` (hashing only those),
    `"strict"` also requires one on every entry (`kind="missing-verification"`), `False` checks
    nothing. A mismatch raises `AgentReplayDivergenceError(kind="state")` with both hashes.
    `entries` may be any iterable (a list, or `iter_log(path)` to stream a file in constant
    memory); `.effects` then sees no history, so pass a list when effects matter.

    `.effects` (owed at the frontier) is derived lazily by the runtime layer's `get_agent_effects`
    through `register_effects_provider` (or `agent_explorer.steps` when importable); it is `[]`
    while no runtime is installed. The fold itself never computes effects.
    """
    mode = _check_verify_mode(verify)
    strict = mode == "strict"
    iterator = iter(entries)
    first = require_init_entry(next(iterator, None))
    snapshot, actions = seed(machine, first)
    get_persisted = machine.get_persisted_snapshot
    persisted: dict[str, Any] | None = None
    current_hash: str | None = None
    checked = 0
    if mode:
        recorded = recorded_state_hash(first)
        if recorded is not None:
            persisted = get_persisted(snapshot)
            current_hash = state_hash(persisted)
            checked += 1
            if current_hash != recorded:
                raise _state_divergence(first, 0, recorded, current_hash)
        elif strict:
            raise _missing_verification(first, 0)

    # The hot loop: one pass, locals only, hashing only where an entry carries a hash. Only the
    # reads of the entry itself are guarded, so an exception from machine code propagates as is.
    machine_id, machine_version = machine.id, machine.version
    index = 0
    for index, entry in enumerate(iterator, start=1):
        try:
            same_machine = entry["machineVersion"] == machine_version and entry["machineId"] == machine_id
            event = entry["event"]
            event_type = event["type"]
            verification = entry.get("verification") if mode else None
            expected = None if verification is None else verification["stateHash"]
        except (KeyError, TypeError, AttributeError) as error:
            raise _malformed(entry, index, error) from error
        if not same_machine:
            raise _version_mismatch(machine, entry, index)
        if event_type == USAGE_EVENT_TYPE:
            pass
        elif event_type == INIT_EVENT_TYPE:
            reject_late_init(event, entry, index)
        else:
            after, actions = transition(machine, snapshot, event)
            if after is not snapshot:  # an ignored event leaves the very same snapshot: keep its hash
                snapshot = after
                persisted = current_hash = None
        if mode:
            if expected is None:
                if strict:
                    raise _missing_verification(entry, index)
                continue
            if current_hash is None:
                persisted = get_persisted(snapshot)
                current_hash = state_hash(persisted)
            checked += 1
            if current_hash != expected:
                raise _state_divergence(entry, index, expected, current_hash)
    kept = entries if isinstance(entries, Sequence) else None
    return ReplayResult(machine, snapshot, actions, index + 1, checked, kept, persisted)
