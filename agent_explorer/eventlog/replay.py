"""Pure replay: fold an event log through a machine back into the state it records, checking hashes.

Job: run `fold` (fold.py holds every rule: the init entry, late inits, the version check, usage
entries) and check `verification.stateHash` on the way (the docs' replay and verification semantics). Raises at the first
problem; `verify_log` is the postmortem that keeps going. Verifying, it is the verifying fold (verifying_fold.py)
with a `Verifier` that raises, so replay and `verify_log` check an entry by the same code. Must never execute an
action, call a model, read a clock, or mutate an entry.

What is still owed at the frontier (`ReplayResult.effects`) is the runtime's business (its effect
ledger): the log layer cannot import it, so a caller passes `owed=` (the top-level
`agent_explorer.replay` and `agent_explorer.steps.replay` are this function with the runtime's).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal

from ..canonical.jcs import state_hash
from ..canonical.verify_hash import check_state_hash
from ..errors import AgentError
from .fold import Step, fold
from .verification import Verifier
from .verifying_fold import verifying_fold

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
    if mode:  # the verifying fold (verifying_fold.py) with replay's rules: the first problem raises
        verifier = Verifier(machine, strict=mode == "strict", keep_snapshots=0, raises=True, hasher=check_state_hash)
        index, snapshot, last_actions = verifying_fold(verifier, entries, check_version=check_version, errors="raise")
        kept = entries if isinstance(entries, Sequence) else None
        return ReplayResult(machine, snapshot, last_actions or [], index + 1, verifier.checked, kept,
                            verifier._persisted, owed)
    last: Step | None = None
    actions: list[Any] = []
    for step in fold(machine, entries, check_version=check_version):
        last = step
        if step.actions is not None:
            actions = step.actions
    assert last is not None  # fold raised for an empty log
    kept = entries if isinstance(entries, Sequence) else None
    return ReplayResult(machine, last.snapshot, actions, last.index + 1, 0, kept, None, owed)
