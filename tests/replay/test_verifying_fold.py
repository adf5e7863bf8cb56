"""The verifying fold (eventlog/verifying_fold.py) against the plain path it replaces.

The plain path is `fold` + `Verifier.check` with the exact `state_hash` (no orjson); the old `replay` loop
is written out below as it was. On random runs with random damage (edited hashes and payloads, hashes
removed, entries dropped or swapped, entries that are not objects or lack their type, late inits, usage
records, a transition that raises, another machine's entry) every verifying caller must report (or raise)
exactly what the plain path does: same divergences (index, kind, hashes, snapshot, message), same counts,
same final snapshot, same error class, code and index.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_explorer.canonical.jcs import state_hash
from agent_explorer.engine import initial_transition, transition
from agent_explorer.engine.transition import next_snapshot, snapshot_stepper, transition_stepper
from agent_explorer.errors import AgentError
from agent_explorer.eventlog import verifying_fold as verifying_fold_module
from agent_explorer.eventlog.entries import recorded_state_hash
from agent_explorer.eventlog.fold import fold
from agent_explorer.eventlog.replay import replay
from agent_explorer.eventlog.timeline import Timeline
from agent_explorer.eventlog.verification import (
    VerificationReport,
    Verifier,
    missing_verification,
    state_divergence,
    verify_log,
)

from .machines import APPROVE, REJECT, STOP, agent_machine, ask, drafted, looked_up, record, usage
from .strategies import events, long_runs

MACHINE = agent_machine()
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _exact(value: Any, expected: str | None) -> str:
    return state_hash(value)


def plain_verify_log(machine: Any, entries: list[Any], *, strict: bool, check_version: bool) -> VerificationReport:
    """verify_log as it was: every Step of `fold` through `Verifier.check`, hashing with `state_hash`."""
    verifier = Verifier(machine, strict=strict, hasher=_exact)
    snapshot = None
    for step in fold(machine, entries, check_version=check_version, errors="record"):
        verifier.check(step)
        snapshot = step.snapshot
    return verifier.report(snapshot)


def plain_replay(machine: Any, entries: list[Any], *, strict: bool) -> tuple[Any, list[Any], int, int]:
    """replay(verify=True/"strict") as it was (its loop over `fold`), hashing with `state_hash`."""
    current: str | None = None
    checked = 0
    last: Any = None
    actions: list[Any] = []
    for step in fold(machine, entries):
        last = step
        if step.actions is not None:
            actions = step.actions
        if step.changed:
            current = None
        expected = recorded_state_hash(step.entry)
        if expected is None:
            if strict:
                raise missing_verification(step.entry, step.index)
            continue
        if current is None:
            current = state_hash(machine.get_persisted_snapshot(step.snapshot))
        checked += 1
        if current != expected:
            raise state_divergence(step.entry, step.index, expected, current)
    return machine.get_persisted_snapshot(last.snapshot), [repr(a) for a in actions], last.index + 1, checked


def _outcome(run: Callable[[], Any]) -> Any:
    """What a call gives, or the error it raises as (class, code, index, message)."""
    try:
        return ("ok", run())
    except Exception as error:  # noqa: BLE001 - machine code raises what it raises; both paths must agree
        return ("raised", type(error), getattr(error, "code", None), getattr(error, "index", None), str(error))


def _report(report: VerificationReport) -> tuple[Any, ...]:
    return (report.entries, report.checked, report.unverified, report.usage, report.divergences,
            report.final_persisted_snapshot or None, report.final_hash)


def _damage(entries: list[Any], kind: str, at: int, other: int) -> None:
    """One edit of a recorded log, in place (`at` >= 1: the init entry stays)."""
    entry = entries[at]
    if not isinstance(entry, dict) or not isinstance(entry.get("event"), dict):
        return  # already junk
    if kind == "hash":
        entry["verification"] = {"stateHash": "0" * 64}
    elif kind == "unhashed":
        entry.pop("verification", None)
    elif kind == "payload":
        entry["event"] = {**entry["event"], "text": "edited", "output": {"text": "edited"}}
    elif kind == "drop":
        del entries[at]
    elif kind == "swap":
        entries[at], entries[other] = entries[other], entries[at]
    elif kind == "not-an-object":
        entries[at] = ["junk"]
    elif kind == "no-type":
        entry["event"] = {"text": "typeless"}
    elif kind == "late-init":
        entry["event"] = {"type": "@agent.init", "input": None}
    elif kind == "raises":
        entry["event"] = {"type": "xstate.done.actor.draft", "output": "not an object"}  # recordDraft reads ["text"]
    elif kind == "index":
        entry["index"] = "seven" if other % 2 else other + 100
    elif kind == "hash-not-a-string":
        entry["verification"] = {"stateHash": other}
    elif kind == "other-machine":
        entry["machineVersion"] = "another"


_KINDS = ["hash", "unhashed", "payload", "drop", "swap", "not-an-object", "no-type", "late-init", "raises", "index",
          "hash-not-a-string", "other-machine"]
damages = st.lists(st.tuples(st.sampled_from(_KINDS), st.integers(1, 10_000), st.integers(0, 10_000)), max_size=4)


def _damaged(sequence: list[dict[str, Any]], edits: list[tuple[str, int, int]], hashes: bool = True) -> list[Any]:
    log: list[Any] = record(MACHINE, sequence, input={"question": "q"}, hashes=hashes)
    for kind, at, other in edits:
        if len(log) > 1:
            _damage(log, kind, 1 + at % (len(log) - 1), 1 + other % (len(log) - 1))
    return log


@SETTINGS
@given(events, damages, st.booleans(), st.booleans())
def test_verify_log_reports_what_the_plain_path_reports(
    sequence: list[dict[str, Any]], edits: list[tuple[str, int, int]], strict: bool, check_version: bool
) -> None:
    _assert_verify_log_agrees(_damaged(sequence, edits), strict, check_version)


def _assert_verify_log_agrees(log: list[Any], strict: bool, check_version: bool) -> None:
    before = copy.deepcopy(log)
    fast = _outcome(lambda: _report(verify_log(MACHINE, log, strict=strict, check_version=check_version)))
    plain = _outcome(lambda: _report(plain_verify_log(MACHINE, log, strict=strict, check_version=check_version)))
    assert fast == plain
    assert log == before  # nothing it verifies is written


@SETTINGS
@given(events, damages, st.booleans())
def test_replay_raises_or_returns_what_the_old_loop_did(
    sequence: list[dict[str, Any]], edits: list[tuple[str, int, int]], strict: bool
) -> None:
    _assert_replay_agrees(_damaged(sequence, edits), strict)


def _assert_replay_agrees(log: list[Any], strict: bool) -> None:
    def fast() -> tuple[Any, list[Any], int, int]:
        result = replay(MACHINE, log, verify="strict" if strict else True)
        return result.persisted_snapshot, [repr(a) for a in result.actions], result.length, result.checked

    assert _outcome(fast) == _outcome(lambda: plain_replay(MACHINE, log, strict=strict))


@SETTINGS
@given(events, damages, st.booleans(), st.lists(st.integers(0, 80), max_size=4))
def test_a_verifying_timeline_built_in_any_chunks_reports_what_verify_log_does(
    sequence: list[dict[str, Any]], edits: list[tuple[str, int, int]], strict: bool, stops: list[int]
) -> None:
    log = _damaged(sequence, [edit for edit in edits if edit[0] != "other-machine"])
    timeline = Timeline(MACHINE, log, checkpoint_every=3, lazy=True, verify="strict" if strict else True,
                        errors="record")
    for stop in stops:  # a background build stops and resumes anywhere
        timeline.build(min(stop, len(log) - 1))
    timeline.build()
    plain = plain_verify_log(MACHINE, log, strict=strict, check_version=True)
    assert _report(timeline.verification) == _report(plain)
    assert MACHINE.get_persisted_snapshot(timeline.state_at(len(log) - 1)) == plain.final_persisted_snapshot


def test_an_unhashed_log_checks_nothing_and_strict_flags_every_entry() -> None:
    log = _damaged([{"type": "ASK", "text": "q"}], [], hashes=False)
    assert plain_verify_log(MACHINE, log, strict=True, check_version=True).counts == {"missing-verification": 2}
    assert _report(verify_log(MACHINE, log, strict=True)) == _report(
        plain_verify_log(MACHINE, log, strict=True, check_version=True)
    )


def test_the_damage_reaches_the_fast_path_and_the_plain_path_alike() -> None:
    """The edits above do what they say (so the properties compare reports that hold divergences)."""
    sequence = [{"type": "ASK", "text": "q"}, {"type": "xstate.done.actor.draft", "output": {"text": "d"}}]
    kinds = {}
    for kind in ("hash", "unhashed", "payload", "not-an-object", "no-type", "late-init", "raises", "index"):
        report = verify_log(MACHINE, _damaged(sequence, [(kind, 1, 5)]), strict=True)
        kinds[kind] = sorted(report.counts)
    assert kinds == {
        "hash": ["state"], "unhashed": ["missing-verification"], "payload": ["state"],
        "not-an-object": ["exception"], "no-type": ["exception"], "late-init": ["exception"],
        "raises": ["exception"], "index": ["sequence"],
    }
    with pytest.raises(AgentError) as raised:
        verify_log(MACHINE, _damaged(sequence, [("other-machine", 1, 1)]))
    assert raised.value.code == "machine-version-mismatch" and getattr(raised.value, "index", None) == 2


@SETTINGS
@given(events)
def test_next_snapshot_is_the_snapshot_transition_returns(sequence: list[dict[str, Any]]) -> None:
    """verify_log folds with engine.transition.next_snapshot (no actions built): the states must be transition's,
    exactly (the checkpoint form too), and transition must still build every action."""
    snapshot, _ = initial_transition(MACHINE, input={"question": "q"})
    lean = snapshot
    built = 0
    for event in sequence:
        if event["type"] == "@agent.usage":
            continue
        snapshot, actions = transition(MACHINE, snapshot, event)
        lean = next_snapshot(MACHINE, lean, event)
        built += len(actions)
        assert MACHINE.get_persisted_snapshot(lean, exact=True) == MACHINE.get_persisted_snapshot(snapshot, exact=True)
        assert lean.value == snapshot.value and lean.tags == snapshot.tags and lean.status == snapshot.status
    if sequence and sequence[0]["type"] == "ASK":
        assert built > 0  # an ASK in idle spawns the draft child: an action is owed


# -- batches and chunks: logs longer than one batch (verifying_fold.BATCH) -----------------------------------------

LONG = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@LONG
@given(long_runs(), damages, st.booleans(), st.booleans())
def test_a_long_log_checked_in_batches_reports_what_the_plain_path_reports(
    sequence: list[dict[str, Any]], edits: list[tuple[str, int, int]], strict: bool, check_version: bool
) -> None:
    _assert_verify_log_agrees(_damaged(sequence, edits), strict, check_version)


@LONG
@given(long_runs(), damages, st.booleans())
def test_replay_of_a_long_log_raises_or_returns_what_the_old_loop_did(
    sequence: list[dict[str, Any]], edits: list[tuple[str, int, int]], strict: bool
) -> None:
    _assert_replay_agrees(_damaged(sequence, edits), strict)


@LONG
@given(long_runs(), damages, st.lists(st.integers(0, 200), max_size=3), st.integers(1, 200))
def test_a_long_verifying_timeline_and_its_forks_count_what_the_plain_path_counts(
    sequence: list[dict[str, Any]], edits: list[tuple[str, int, int]], stops: list[int], cut: int
) -> None:
    """The Timeline takes each step as it is folded and the fold marks the verifier's counts at the checkpoints
    once they are checked: a fork, which counts from the mark below its cut, must count what the plain path
    counts over the fork's entries."""
    log = _damaged(sequence, [edit for edit in edits if edit[0] != "other-machine"])
    timeline = Timeline(MACHINE, log, checkpoint_every=5, lazy=True, verify=True, errors="record")
    for stop in stops:
        timeline.build(min(stop, len(log) - 1))
    timeline.build()
    assert _report(timeline.verification) == _report(plain_verify_log(MACHINE, log, strict=False, check_version=True))
    up_to = 1 + cut % len(log)
    fork = timeline.fork(up_to)
    fork.build()
    assert _report(fork.verification) == _report(
        plain_verify_log(MACHINE, log[:up_to], strict=False, check_version=True)
    )


def _cycle(count: int) -> list[dict[str, Any]]:
    """A run that never ends: ask, a usage record, a draft, approve or reject, a lookup, and again."""
    run: list[dict[str, Any]] = []
    snapshot, _ = initial_transition(MACHINE, input={"question": "q"})
    for turn in range(count):
        state = snapshot.value
        if state == "idle":
            event = usage(turn) if run and run[-1]["type"] != "@agent.usage" else ask(f"question {turn}")
        elif state == "thinking":
            event = drafted(f"draft {turn}")
        elif state == "deciding":
            event = REJECT if sum(e is REJECT for e in run) < sum(e is APPROVE for e in run) else APPROVE
        else:
            event = looked_up(turn)
        run.append(event)
        if event["type"] != "@agent.usage":
            snapshot, _ = transition(MACHINE, snapshot, event)
    return run


def test_a_clean_long_log_is_checked_wholesale_and_a_divergence_entry_by_entry(monkeypatch: Any) -> None:
    """The fast path is the one taken: a clean 300-entry log never reaches the entry-by-entry check, and one
    edited hash sends exactly its batch there (and is found at its entry)."""
    log = record(MACHINE, _cycle(300), input={"question": "q"})
    assert {entry["event"]["type"] for entry in log} >= {"ASK", "@agent.usage", "APPROVE", "REJECT"}
    batches: list[list[int]] = []
    check = verifying_fold_module._check
    monkeypatch.setattr(verifying_fold_module, "_check",
                        lambda run, batch: (batches.append([item[0] for item in batch]), check(run, batch))[1])
    report = verify_log(MACHINE, log)
    usage_records = sum(entry["event"]["type"] == "@agent.usage" for entry in log)
    assert report.ok and report.checked == len(log) and report.usage == usage_records > 0 and batches == []
    log[70] = {**log[70], "verification": {"stateHash": "0" * 64}}
    report = verify_log(MACHINE, log)
    assert report.divergent_indices == [70] and report.checked == len(log)
    assert batches == [list(range(65, 97))]  # entries 1-32, 33-64, 65-96: the third batch, entry by entry
    assert _report(report) == _report(plain_verify_log(MACHINE, log, strict=False, check_version=True))


@LONG
@given(long_runs(min_size=0, max_size=80))
def test_one_stepper_folds_every_step_as_transition_does(sequence: list[dict[str, Any]]) -> None:
    """snapshot_stepper reuses one engine Scope for a whole fold: the states must be transition's, step after
    step, through final states (which leave raised events behind) and transitions that raise."""
    step = snapshot_stepper(MACHINE)
    snapshot, _ = initial_transition(MACHINE, input={"question": "q"})
    lean = snapshot
    for event in [*sequence, STOP, ask("after the end"), {"type": "xstate.done.actor.draft", "output": "no"}]:
        if event["type"] == "@agent.usage":
            continue
        try:
            snapshot, _ = transition(MACHINE, snapshot, event)
        except Exception as error:  # noqa: BLE001 - the stepper must raise the same, and go on as well
            with pytest.raises(type(error)):
                step(lean, event)
            continue
        lean = step(lean, event)
        assert MACHINE.get_persisted_snapshot(lean, exact=True) == MACHINE.get_persisted_snapshot(snapshot, exact=True)


@LONG
@given(long_runs(min_size=0, max_size=80))
def test_one_transition_stepper_returns_what_transition_returns(sequence: list[dict[str, Any]]) -> None:
    """transition_stepper (replay's and a Timeline's fold) reuses one Scope too: each step's snapshot and its own
    actions, not the last step's, must be transition's."""
    step = transition_stepper(MACHINE)
    snapshot, _ = initial_transition(MACHINE, input={"question": "q"})
    lean = snapshot
    for event in [*sequence, STOP, ask("after the end")]:
        if event["type"] == "@agent.usage":
            continue
        snapshot, actions = transition(MACHINE, snapshot, event)
        lean, owed = step(lean, event)
        assert MACHINE.get_persisted_snapshot(lean, exact=True) == MACHINE.get_persisted_snapshot(snapshot, exact=True)
        assert [repr(action) for action in owed] == [repr(action) for action in actions]


def test_records_that_are_not_hashes_in_lowercase_hex_diverge_in_a_batch_as_alone() -> None:
    """A batch compares its digests in one string; records of other lengths that would line up with them
    joined (63 + 65 characters), and a hash in capitals, still diverge, as they do one by one."""
    log = record(MACHINE, _cycle(80), input={"question": "q"})
    first, second = (entry["verification"]["stateHash"] for entry in log[40:42])
    log[40] = {**log[40], "verification": {"stateHash": first[:63]}}
    log[41] = {**log[41], "verification": {"stateHash": first[63] + second}}
    log[45] = {**log[45], "verification": {"stateHash": log[45]["verification"]["stateHash"].upper()}}
    report = verify_log(MACHINE, log)
    assert report.divergent_indices == [40, 41, 45]
    assert _report(report) == _report(plain_verify_log(MACHINE, log, strict=False, check_version=True))
