"""Pure replay: fold an event log through a machine back into the state it records, checking hashes.

Job: run `fold` (fold.py holds every rule: the init entry, late inits, the version check, usage
entries) and check `verification.stateHash` on the way (the docs' replay and verification semantics). Raises at the first
problem; `verify_log` is the postmortem that keeps going. Must never execute an action, call a model,
read a clock, or mutate an entry.

What is still owed at the frontier (`ReplayResult.effects`) is the runtime's business (its effect
ledger): the log layer cannot import it, so a caller passes `owed=` (the top-level
`agent_explorer.replay` and `agent_explorer.steps.replay` are this function with the runtime's).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal

from ..canonical.jcs import state_hash
from ..canonical.verify_hash import check_state_hash
from ..errors import AgentError, AgentReplayDivergenceError
from .entries import recorded_state_hash
from .fold import Step, fold

__all__ = ["OwedEffects", "ReplayResult", "VerifyMode", "replay"]

VerifyMode = bool | Literal["strict"]
OwedEffects = Callable[[Any, Sequence[Mapping[str, Any]]], list[Any]]
"""`owed(machine, entries) -> effects`: what a journal still owes at its end (the runtime's ledger fold)."""


class ReplayResult:
    """What a log folds to: `.snapshot` (engine Snapshot), `.persisted_snapshot` (its JSON).

    `.effects` is what is still owed at the frontier, derived on first read by the `owed` function the
    caller gave (the runtime's effect ledger; nothing executes). `.actions` are the actions the last
    transition returned (unexecuted), `.length` the number of entries folded, `.checked` how many
    state hashes were verified.
    """

    __slots__ = ("_effects", "_entries", "_owed", "_persisted", "actions", "checked", "length", "machine", "snapshot")

    def __init__(
        self,
        machine: Any,
        snapshot: Any,
        actions: Sequence[Any],
        length: int,
        checked: int,
        entries: Sequence[Mapping[str, Any]] | None,
        persisted: dict[str, Any] | None,
        owed: OwedEffects | None = None,
    ) -> None:
        self.machine = machine
        self.snapshot = snapshot
        self.actions = list(actions)
        self.length = length
        self.checked = checked
        self._entries = entries
        self._persisted = persisted
        self._owed = owed
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
            if self._owed is None:
                raise AgentError(
                    "This replay was run without the runtime's effect ledger, so it cannot say what is owed: "
                    "use agent_explorer.replay (or agent_explorer.steps.replay), which derives .effects.",
                    code="no-effect-ledger",
                )
            if self._entries is None:
                raise AgentError(
                    "replay(...).effects needs the log as a list (the ledger counts request occurrences over "
                    "the whole journal); it was given a one-pass iterator.",
                    code="no-effect-ledger",
                )
            self._effects = list(self._owed(self.machine, self._entries))
        return self._effects

    def __iter__(self) -> Iterator[Any]:
        """`snapshot, effects = replay(...)`: the step path's `{ snapshot, effects }`."""
        yield self.snapshot
        yield self.effects

    def __repr__(self) -> str:
        value = getattr(self.snapshot, "value", None)
        status = getattr(self.snapshot, "status", None)
        return f"ReplayResult(length={self.length}, status={status!r}, value={value!r}, checked={self.checked})"


def check_verify_mode(verify: Any) -> VerifyMode:
    if verify is True or verify is False or verify == "strict":
        return verify  # type: ignore[no-any-return]
    raise AgentError(f"verify must be True, False or 'strict', not {verify!r}.", code="invalid-verify-mode")


def state_divergence(entry: Mapping[str, Any], index: int, expected: str, actual: str) -> AgentReplayDivergenceError:
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


def missing_verification(entry: Mapping[str, Any], index: int) -> AgentReplayDivergenceError:
    return AgentReplayDivergenceError(
        f"Entry {index} (id {entry.get('id')!r}) carries no verification.stateHash, and "
        "verify='strict' requires one on every entry. Re-record with hashing on, or replay with "
        "verify=True to check only the entries that carry one.",
        event_id=entry.get("id"),
        index=index,
        kind="missing-verification",
        event=entry.get("event"),
    )


def replay(
    machine: Any,
    entries: Iterable[Mapping[str, Any]],
    verify: VerifyMode = True,
    *,
    owed: OwedEffects | None = None,
    check_version: bool = True,
) -> ReplayResult:
    """Fold `entries` through `machine`; nothing executes. `replay(m, entries[:n])` is time travel.

    `verify=True` checks every entry that carries `verification.stateHash` (hashing only those, and
    only when the state changed since the last hash), `"strict"` also requires one on every entry
    (`kind="missing-verification"`), `False` checks nothing. A mismatch raises
    `AgentReplayDivergenceError(kind="state")` with both hashes. `entries` may be any iterable (a
    list, or `iter_log(path)` to stream a file in constant memory). `owed(machine, entries)` derives
    `.effects` on first read (the runtime passes its effect ledger's fold).
    """
    mode = check_verify_mode(verify)
    strict = mode == "strict"
    get_persisted = machine.get_persisted_snapshot
    persisted: dict[str, Any] | None = None
    current_hash: str | None = None
    checked = 0
    last: Step | None = None
    actions: list[Any] = []
    for step in fold(machine, entries, check_version=check_version):
        last = step
        if step.actions is not None:
            actions = step.actions
        if step.changed:
            persisted = current_hash = None
        if not mode:
            continue
        entry = step.entry
        expected = recorded_state_hash(entry)
        if expected is None:
            if strict:
                raise missing_verification(entry, step.index)
            continue
        if current_hash is None:
            persisted = get_persisted(step.snapshot)
            # orjson's speed; exact (and strict) wherever it differs from the record (canonical/verify_hash.py)
            current_hash = check_state_hash(persisted, expected)
        checked += 1
        if current_hash != expected:
            raise state_divergence(entry, step.index, expected, current_hash)
    assert last is not None  # fold raised for an empty log
    kept = entries if isinstance(entries, Sequence) else None
    return ReplayResult(machine, last.snapshot, actions, last.index + 1, checked, kept, persisted, owed)
