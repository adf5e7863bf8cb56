"""Postmortem verification: fold a whole log without stopping and report every divergence.

Job: where `replay` raises at the first problem, `verify_log` keeps going so a postmortem sees the
full picture: every entry whose recorded `stateHash` disagrees with the fold, entries missing a
hash (strict), entries out of sequence, and transitions that raised. Pure: it never executes an
action, mutates an entry, or imports pandas until `to_pandas()` is called.

After a divergence the fold continues from the *replayed* state (the log records only a hash,
not the state it hashed), so one edited payload typically shows as a run of divergent indices
that starts at the edit, while an edited hash shows as exactly one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, Literal

from ..canonical.jcs import state_hash
from ..engine import transition
from ..errors import AgentReplayDivergenceError
from .entries import INIT_EVENT_TYPE, USAGE_EVENT_TYPE, recorded_state_hash
from .replay import check_entry_machine, require_init_entry, seed

__all__ = ["Divergence", "DivergenceKind", "VerificationReport", "verify_log"]

DivergenceKind = Literal["state", "missing-verification", "sequence", "exception"]
"""- "state": the fold's state hash differs from the entry's recorded `verification.stateHash`.
- "missing-verification": the entry has no hash and the check was strict.
- "sequence": the entry's `index` field is not its predecessor's plus one (dropped or reordered
  entries); `expected_hash`/`actual_hash` are None, the message gives both indices.
- "exception": folding the entry raised; the fold keeps the state from before the entry.
"""


@dataclass(frozen=True)
class Divergence:
    """One problem at one log position (`index` is the position in the given sequence)."""

    index: int
    event_id: str | None
    event: Any
    kind: DivergenceKind
    expected_hash: str | None
    actual_hash: str | None
    persisted_snapshot: dict[str, Any] | None
    message: str = ""

    @property
    def event_type(self) -> str | None:
        return self.event.get("type") if isinstance(self.event, Mapping) else None

    def to_error(self) -> AgentReplayDivergenceError:
        """The error `replay` raises for the same problem (kinds "state"/"missing-verification")."""
        return AgentReplayDivergenceError(
            self.message,
            event_id=self.event_id,
            index=self.index,
            kind=self.kind,
            expected_hash=self.expected_hash,
            actual_hash=self.actual_hash,
            event=self.event,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "event_id": self.event_id,
            "event_type": self.event_type,
            "kind": self.kind,
            "expected_hash": self.expected_hash,
            "actual_hash": self.actual_hash,
            "message": self.message,
        }


@dataclass(frozen=True)
class VerificationReport:
    """The result of `verify_log`: `.ok`, `.first_divergence`, `.divergent_indices`, counts.

    `entries` folded, `checked` hashes compared, `unverified` entries without a hash, `usage`
    `@agent.usage` entries; `counts` maps each divergence kind to how often it occurred.
    `divergences` is in log order (an index can appear once per kind). `final_persisted_snapshot`
    and `final_hash` describe the state the fold ended in.
    """

    entries: int
    checked: int
    unverified: int
    usage: int
    divergences: list[Divergence]
    final_persisted_snapshot: dict[str, Any] | None = None
    strict: bool = False
    _final_hash: list[str] = field(default_factory=list, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return not self.divergences

    @property
    def first_divergence(self) -> int | None:
        return self.divergences[0].index if self.divergences else None

    @property
    def first(self) -> Divergence | None:
        return self.divergences[0] if self.divergences else None

    @property
    def divergent_indices(self) -> list[int]:
        return sorted({divergence.index for divergence in self.divergences})

    @property
    def counts(self) -> dict[str, int]:
        return dict(Counter(divergence.kind for divergence in self.divergences))

    @property
    def final_hash(self) -> str | None:
        if self.final_persisted_snapshot is None:
            return None
        if not self._final_hash:
            self._final_hash.append(state_hash(self.final_persisted_snapshot))
        return self._final_hash[0]

    def raise_for_divergence(self) -> None:
        """Raise the first divergence as `AgentReplayDivergenceError` (no-op when ok)."""
        if self.divergences:
            raise self.divergences[0].to_error()

    def to_pandas(self) -> Any:
        """A `pandas.DataFrame`, one row per divergence (index, event_id, event_type, kind, hashes, message)."""
        import pandas as pd  # lazy: the log layer must not need pandas

        columns = ["index", "event_id", "event_type", "kind", "expected_hash", "actual_hash", "message"]
        return pd.DataFrame([divergence.to_dict() for divergence in self.divergences], columns=columns)

    def __str__(self) -> str:
        head = (
            f"{self.entries} entries, {self.checked} hashes checked, {self.unverified} without a hash, "
            f"{self.usage} usage records"
        )
        if self.ok:
            return f"Log verifies: {head}."
        first = self.divergences[0]
        kinds = ", ".join(f"{count} {kind}" for kind, count in self.counts.items())
        return (
            f"Log diverges: {head}; {len(self.divergences)} divergences ({kinds}); first at entry "
            f"{first.index} ({first.kind}, event {first.event_type!r})."
        )


def verify_log(
    machine: Any,
    entries: Iterable[Mapping[str, Any]],
    *,
    strict: bool = False,
    check_version: bool = True,
    keep_snapshots: int = 1000,
    progress: Callable[[int], None] | None = None,
) -> VerificationReport:
    """Fold the whole log, checking every hash, and report instead of raising.

    A log that cannot be folded at all still raises: no init entry (`AgentLogFormatError`) and,
    with `check_version=True`, an entry recorded by another machine version
    (`AgentMachineVersionMismatchError`, a precondition rather than a divergence). Pass
    `check_version=False` to fold a log through a machine that did not record it (e.g. to see
    where today's code parts from an old log). The replayed persisted snapshot is kept on the
    first `keep_snapshots` divergences (bounding memory on a long log that diverges early).
    `entries` may be any iterable, so `verify_log(m, iter_log(path))` streams a file.
    `progress(done)`, when given, is called after each entry with the number folded so far (the
    callback throttles itself; the CLI draws a bar with it).
    """
    iterator = iter(entries)
    first = require_init_entry(next(iterator, None))
    snapshot, _ = seed(machine, first, check_version=check_version)
    get_persisted = machine.get_persisted_snapshot
    divergences: list[Divergence] = []
    kept = 0
    checked = unverified = usage = 0
    persisted: dict[str, Any] | None = None
    current_hash: str | None = None

    def record(
        index: int, entry: Mapping[str, Any], kind: DivergenceKind, message: str,
        expected: str | None = None, actual: str | None = None, snapshot_json: dict[str, Any] | None = None,
    ) -> None:
        nonlocal kept
        if snapshot_json is not None:
            if kept < keep_snapshots:
                kept += 1
            else:
                snapshot_json = None
        divergences.append(
            Divergence(index, entry.get("id"), entry.get("event"), kind, expected, actual, snapshot_json, message)
        )

    previous_index: Any = None
    machine_id, machine_version = machine.id, machine.version
    position = -1
    for position, entry in enumerate(chain((first,), iterator)):
        if progress is not None and position:
            progress(position)
        event = entry.get("event") or {}
        event_type = event.get("type")
        recorded_index = entry.get("index")
        expected_index = 0 if position == 0 else (previous_index + 1 if isinstance(previous_index, int) else None)
        if isinstance(recorded_index, int) and expected_index is not None and recorded_index != expected_index:
            record(
                position, entry, "sequence",
                f"Entry at position {position} carries index {recorded_index}, expected {expected_index}: "
                "an entry is missing, duplicated or out of order here.",
            )
        previous_index = recorded_index if isinstance(recorded_index, int) else None
        if position > 0:
            if check_version and (
                entry.get("machineVersion") != machine_version or entry.get("machineId") != machine_id
            ):
                check_entry_machine(machine, entry, position)
            if event_type == USAGE_EVENT_TYPE:
                usage += 1
            elif event_type == INIT_EVENT_TYPE:
                record(position, entry, "exception", f"Entry {position} is a second {INIT_EVENT_TYPE} entry; skipped.")
            else:
                try:
                    after, _ = transition(machine, snapshot, event)
                except Exception as error:  # noqa: BLE001 - a postmortem records, it does not stop
                    record(
                        position, entry, "exception",
                        f"Folding entry {position} (event {event_type!r}) raised {type(error).__name__}: "
                        f"{error}. The fold continues from the state before it.",
                    )
                    continue
                if after is not snapshot:  # an ignored event returns the same snapshot: same hash
                    snapshot = after
                    persisted = current_hash = None
        expected = recorded_state_hash(entry)
        if expected is None:
            unverified += 1
            if strict:
                record(
                    position, entry, "missing-verification",
                    f"Entry {position} carries no verification.stateHash (strict verification).",
                )
            continue
        if current_hash is None:
            persisted = get_persisted(snapshot)
            current_hash = state_hash(persisted)
        checked += 1
        if current_hash != expected:
            record(
                position, entry, "state",
                f"Entry {position} (event {event_type!r}) recorded stateHash {expected}, the fold "
                f"derived {current_hash}.",
                expected, current_hash, persisted,
            )
    if progress is not None:
        progress(position + 1)
    if persisted is None:
        persisted = get_persisted(snapshot)
    return VerificationReport(
        entries=position + 1,
        checked=checked,
        unverified=unverified,
        usage=usage,
        divergences=divergences,
        final_persisted_snapshot=persisted,
        strict=strict,
    )
