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

import bisect
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Literal

from ..canonical.jcs import state_hash
from ..canonical.verify_hash import check_state_hash
from ..errors import AgentLogFormatError, AgentReplayDivergenceError
from ..plural import plural
from .entries import USAGE_EVENT_TYPE, recorded_state_hash
from .fold import Step
from .verifying_fold import verifying_fold

__all__ = ["Divergence", "DivergenceKind", "VerificationReport", "Verifier", "verify_log"]

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
            f"{plural(self.entries, 'entry', 'entries')}, {plural(self.checked, 'hash', 'hashes')} checked, "
            f"{self.unverified} without a hash, {plural(self.usage, 'usage record')}"
        )
        if self.ok:
            return f"Log verifies: {head}."
        first = self.divergences[0]
        kinds = ", ".join(f"{count} {kind}" for kind, count in self.counts.items())
        return (
            f"Log diverges: {head}; {plural(len(self.divergences), 'divergence')} ({kinds}); first at entry "
            f"{first.index} ({first.kind}, event {first.event_type!r})."
        )


class Verifier:
    """Checks folded steps one at a time and keeps the report's counts: the part of verification that is
    not folding, so `verify_log` and a Timeline that verifies as it builds (the explorer's one fold) share
    every rule. Feed it every Step of one fold, in order, from the init step on; or let `verifying_fold` drive it
    (the loop verify_log, replay and a verifying Timeline use), which checks ordinary entries inline by these
    same rules and hands it everything else.

    After a divergence the fold continues from the *replayed* state (the log records only a hash, not the
    state it hashed). The replayed persisted snapshot is kept on the first `keep_snapshots` divergences.
    """

    __slots__ = (
        "_hash", "_kept", "_marks", "_persisted", "_previous_index", "_tallies", "checked", "divergences", "entries",
        "hasher", "keep_snapshots", "machine", "raises", "strict", "unverified", "usage",
    )

    def __init__(
        self, machine: Any, *, strict: bool = False, keep_snapshots: int = 1000, raises: bool = False,
        hasher: Callable[[Any, str | None], str] = check_state_hash,
    ) -> None:
        self.machine = machine
        # `hasher(persisted, expected)`: check_state_hash, or anything that returns the same digests
        # (`state_hash` ignoring `expected`, the plain path the tests hold the verifying fold to)
        self.hasher = hasher
        self.strict = strict
        self.keep_snapshots = keep_snapshots
        # replay's rules: the first "state" or "missing-verification" problem raises replay's error, and the
        # entries' index fields are not checked (replay never checked them)
        self.raises = raises
        self.divergences: list[Divergence] = []
        self.entries = self.checked = self.unverified = self.usage = 0
        self._kept = 0
        self._previous_index: Any = None
        self._persisted: dict[str, Any] | None = None
        self._hash: str | None = None
        # Counts as they stood after some positions (a Timeline marks its checkpoints): a fork counts from the
        # nearest one below its cut instead of from 0.
        self._marks: list[int] = []
        self._tallies: list[tuple[int, int, int, Any]] = []

    @classmethod
    def resumed(
        cls, machine: Any, *, entries: int, checked: int, unverified: int, usage: int, previous_index: int | None,
        strict: bool = False,
    ) -> Verifier:
        """A verifier that goes on after `entries` entries whose counts a cache kept (their divergences are the
        cache's business): the next step it checks is at position `entries`."""
        verifier = cls(machine, strict=strict, keep_snapshots=0)
        verifier.entries, verifier.checked, verifier.unverified, verifier.usage = entries, checked, unverified, usage
        verifier._previous_index = previous_index
        return verifier

    @property
    def previous_index(self) -> int | None:
        """The `index` field of the last entry checked (what the next one's must follow), None if it had none."""
        return self._previous_index if isinstance(self._previous_index, int) else None

    def mark(self) -> None:
        """Remember the counts as they stand now (after the last step checked)."""
        self.mark_at(self.entries - 1, self.checked, self.unverified, self.usage, self._previous_index)

    def mark_at(self, position: int, checked: int, unverified: int, usage: int, previous_index: Any) -> None:
        """Remember the counts as they stood after `position` (the verifying fold marks a batch's positions)."""
        if not self._marks or self._marks[-1] < position:
            self._marks.append(position)
            self._tallies.append((checked, unverified, usage, previous_index))

    def copy_until(self, entries: Sequence[Mapping[str, Any]], stop: int) -> Verifier:
        """A verifier that has seen exactly `entries[:stop]` of this one's fold (a fork's, at its cut).

        The counts are taken from the last mark below the cut; those of the entries after it are read off
        the entries themselves (no fold: a hash is checked where one is recorded). The divergences are this
        verifier's below the cut.
        """
        clone = Verifier(
            self.machine, strict=self.strict, keep_snapshots=self.keep_snapshots, raises=self.raises, hasher=self.hasher
        )
        clone.divergences = [d for d in self.divergences if d.index < stop]
        clone._kept = sum(1 for d in clone.divergences if d.persisted_snapshot is not None)
        raised = {d.index for d in clone.divergences if d.kind == "exception"}
        kept = bisect.bisect_left(self._marks, stop)  # marks at positions < stop
        clone._marks, clone._tallies = self._marks[:kept], self._tallies[:kept]
        begin = 0
        if kept:
            begin = clone._marks[-1] + 1
            clone.checked, clone.unverified, clone.usage, clone._previous_index = clone._tallies[-1]
            clone.entries = begin
        for position, entry in enumerate(islice(entries, begin, stop), begin):
            clone.entries += 1
            recorded_index = entry.get("index") if isinstance(entry, Mapping) else None
            clone._previous_index = recorded_index if isinstance(recorded_index, int) else None
            if position in raised or not isinstance(entry, Mapping):
                continue
            event = entry.get("event") or {}
            if clone.entries > 1 and isinstance(event, Mapping) and event.get("type") == USAGE_EVENT_TYPE:
                clone.usage += 1
            if recorded_state_hash(entry) is None:
                clone.unverified += 1
            else:
                clone.checked += 1
        return clone

    def check(self, step: Step) -> None:
        """Take the next folded step: its position, its hash, and any error the fold recorded there."""
        # Runs once per entry of every verifying fold: exact-type tests first (a log read from JSON holds
        # dicts and ints), the ABC isinstance checks only for other mappings.
        position = step.index
        entry = step.entry
        self.entries = position + 1
        if step.changed or position == 0:
            self._persisted = self._hash = None
        mapping = type(entry) is dict or isinstance(entry, Mapping)
        recorded_index = entry.get("index") if mapping else None
        if type(recorded_index) is not int and not isinstance(recorded_index, int):
            recorded_index = None
        previous = self._previous_index
        if recorded_index is not None and not self.raises and (position == 0 or previous is not None):
            expected_index = 0 if position == 0 else previous + 1
            if recorded_index != expected_index:
                self._sequence(step, recorded_index, expected_index)
        self._previous_index = recorded_index
        if step.error is not None:  # an entry that is not an object is one too: the fold recorded why
            self._record(step, "exception", _error_message(step), None, None, None)
            return
        if not mapping:
            return
        if position and step.actions is None:  # no transition ran: a usage record
            self.usage += 1
        verification = entry.get("verification")
        expected = (
            verification.get("stateHash")
            if type(verification) is dict or isinstance(verification, Mapping) else None
        )
        if expected is None:
            self.unverified += 1
            if self.strict:
                self.missing(step)
            return
        if self._hash is None:
            self._persisted = self.machine.get_persisted_snapshot(step.snapshot)
            # orjson's speed; exact (and strict) wherever it differs from the record (canonical/verify_hash.py)
            self._hash = self.hasher(self._persisted, expected)
        self.checked += 1
        if self._hash != expected:
            self.diverged(step, expected, self._hash, self._persisted)

    def missing(self, step: Step) -> None:
        """Record (or, for replay, raise) that the entry of `step` carries no hash under strict verification."""
        if self.raises:
            raise missing_verification(step.entry, step.index)
        self._record(
            step, "missing-verification",
            f"Entry {step.index} carries no verification.stateHash (strict verification).", None, None, None,
        )

    def diverged(self, step: Step, expected: Any, actual: str, persisted: dict[str, Any] | None) -> None:
        """Record (or, for replay, raise) that the fold derived `actual` where the entry recorded `expected`."""
        if self.raises:
            raise state_divergence(step.entry, step.index, expected, actual)
        self._record(
            step, "state",
            f"Entry {step.index} (event {step.event_type!r}) recorded stateHash {expected}, the fold derived {actual}.",
            expected, actual, persisted,
        )

    def _sequence(self, step: Step, recorded: int, expected: int) -> None:
        self._record(
            step, "sequence",
            f"Entry at position {step.index} carries index {recorded}, expected {expected}: "
            "an entry is missing, duplicated or out of order here.",
            None, None, None,
        )

    def _record(
        self, step: Step, kind: DivergenceKind, message: str,
        expected: str | None, actual: str | None, snapshot_json: dict[str, Any] | None,
    ) -> None:
        if snapshot_json is not None:
            if self._kept < self.keep_snapshots:
                self._kept += 1
            else:
                snapshot_json = None
        entry = step.entry if isinstance(step.entry, Mapping) else {}
        self.divergences.append(
            Divergence(step.index, entry.get("id"), entry.get("event"), kind, expected, actual, snapshot_json, message)
        )

    def report(self, final_snapshot: Any = None) -> VerificationReport:
        """The report of what was checked so far (`final_snapshot`: the state the fold is in)."""
        persisted = self._persisted
        if persisted is None and final_snapshot is not None:
            persisted = self.machine.get_persisted_snapshot(final_snapshot)
        return VerificationReport(
            entries=self.entries,
            checked=self.checked,
            unverified=self.unverified,
            usage=self.usage,
            divergences=list(self.divergences),
            final_persisted_snapshot=persisted,
            strict=self.strict,
        )


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


def _error_message(step: Step) -> str:
    error = step.error
    if isinstance(error, AgentLogFormatError):
        return f"{error.message} The fold continues from the state before it."
    return (
        f"Folding entry {step.index} (event {step.event_type!r}) raised {type(error).__name__}: "
        f"{error}. The fold continues from the state before it."
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
    verifier = Verifier(machine, strict=strict, keep_snapshots=keep_snapshots)
    _, snapshot, _ = verifying_fold(
        verifier, entries, check_version=check_version, errors="record", progress=progress, actions=False
    )
    if progress is not None:
        progress(verifier.entries)
    return verifier.report(snapshot)
