"""Tampered copies of a real log: each tamper is found at its exact index, with its kind.

The log is `conversation(6)` recorded live (35 entries). Its layout, which the expectations
below are derived from by hand:

    0 init | turn 0: 1 ASK, 2 usage, 3 draft, 4 APPROVE, 5 lookup
    turn 1: 6 ASK, 7 usage, 8 draft, 9 REJECT, 10 draft, 11 APPROVE, 12 lookup
    turn 2: 13-17 | turn 3: 18-22 | turn 4: 23-29 (with a REJECT) | turn 5: 30-34
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from agent_explorer.errors import AgentError, AgentLogFormatError, AgentReplayDivergenceError
from agent_explorer.eventlog.diff import compare_machines
from agent_explorer.eventlog.replay import replay
from agent_explorer.eventlog.snapshot_cache import find_in_flight, persist_snapshot
from agent_explorer.eventlog.verification import verify_log

from .machines import agent_machine, conversation, record


def test_the_untampered_log_verifies(machine: Any, log: list[dict[str, Any]]) -> None:
    assert len(log) == 35
    report = verify_log(machine, log)
    assert report.ok and report.first_divergence is None and report.divergent_indices == []
    assert (report.entries, report.checked, report.unverified, report.usage) == (35, 35, 0, 6)
    assert report.final_hash == log[-1]["verification"]["stateHash"]


def test_changed_event_payload(machine: Any, log: list[dict[str, Any]]) -> None:
    tampered = copy.deepcopy(log)
    tampered[6]["event"]["text"] = "a different question"
    with pytest.raises(AgentReplayDivergenceError) as caught:
        replay(machine, tampered)
    assert (caught.value.index, caught.value.kind, caught.value.event_id) == (6, "state", log[6]["id"])
    report = verify_log(machine, tampered)
    # The edited question lives in context.question until the next ASK (13) and in the history
    # until 20 later appends push it out: entries 8-12, 13, 15-17, 18, 20-22, 23, 25-29 append
    # 19 items; the 20th append (entry 30) drops it, so the fold agrees again from 30 on.
    assert report.divergent_indices == list(range(6, 30))
    assert {d.kind for d in report.divergences} == {"state"}
    first = report.divergences[0]
    assert first.persisted_snapshot is not None
    assert first.persisted_snapshot["context"]["question"] == "a different question"
    assert first.actual_hash != first.expected_hash == log[6]["verification"]["stateHash"]


def test_dropped_entry(machine: Any, log: list[dict[str, Any]]) -> None:
    tampered = copy.deepcopy(log)
    del tampered[9]  # the REJECT of turn 1
    with pytest.raises(AgentReplayDivergenceError) as caught:
        replay(machine, tampered)
    # Position 9 now holds the redraft (recorded index 10): without the REJECT there is no
    # draft child to complete, so the completion is ignored and the state differs.
    assert (caught.value.index, caught.value.kind, caught.value.event_id) == (9, "state", log[10]["id"])
    report = verify_log(machine, tampered)
    assert report.first_divergence == 9
    sequence = [d for d in report.divergences if d.kind == "sequence"]
    assert [d.index for d in sequence] == [9]
    assert "carries index 10, expected 9" in sequence[0].message


def test_reordered_pair(machine: Any, log: list[dict[str, Any]]) -> None:
    tampered = copy.deepcopy(log)
    tampered[3], tampered[4] = tampered[4], tampered[3]  # APPROVE before the draft completed
    with pytest.raises(AgentReplayDivergenceError) as caught:
        replay(machine, tampered)
    assert (caught.value.index, caught.value.kind) == (3, "state")
    report = verify_log(machine, tampered)
    # 3: APPROVE while thinking is ignored (recorded: acting). 4: the draft completes, which is
    # exactly the state recorded after the draft, so its hash agrees. 5: the lookup has no child
    # to complete, and the approval never happened: `approved` stays one behind to the end.
    assert [d.index for d in report.divergences if d.kind == "state"] == [3, *range(5, 35)]
    assert [d.index for d in report.divergences if d.kind == "sequence"] == [3, 4, 5]
    assert report.counts == {"state": 31, "sequence": 3}


def test_edited_hash_is_one_divergence_and_the_fold_continues_from_the_replayed_state(
    machine: Any, log: list[dict[str, Any]]
) -> None:
    tampered = copy.deepcopy(log)
    tampered[17]["verification"]["stateHash"] = "f" * 64
    report = verify_log(machine, tampered)
    assert report.divergent_indices == [17]
    (divergence,) = report.divergences
    assert (divergence.kind, divergence.expected_hash) == ("state", "f" * 64)
    assert divergence.actual_hash == log[17]["verification"]["stateHash"]
    assert divergence.event_id == log[17]["id"] and divergence.event == log[17]["event"]


def test_guard_changed_without_a_version_bump_injected_clock() -> None:
    # The Date.now() hazard: recorded while the clock said 500 (approval within the window),
    # replayed when it says 5000. Same guard name, so the structural version is unchanged.
    recorded_with = agent_machine(clock=lambda: 500.0)
    replayed_with = agent_machine(clock=lambda: 5_000.0)
    assert recorded_with.version == replayed_with.version
    log = record(recorded_with, conversation(2), input={"question": "q"})
    assert verify_log(recorded_with, log).ok
    with pytest.raises(AgentReplayDivergenceError) as caught:
        replay(replayed_with, log)
    assert (caught.value.index, caught.value.kind) == (4, "state")  # the first APPROVE
    report = verify_log(replayed_with, log)
    assert report.first_divergence == 4
    assert {d.kind for d in report.divergences} == {"state"}

    comparison = compare_machines(recorded_with, replayed_with, log)
    assert comparison.index == 4
    assert comparison.event == {"type": "APPROVE"}
    by_path = {change.path: change for change in comparison.diff}
    assert (by_path[("value",)].before, by_path[("value",)].after) == ("acting", "idle")
    assert (by_path[("context", "history", 2)].before, by_path[("context", "history", 2)].after) == ("approve", "late")
    approve = recorded_with.definition["states"]["deciding"]["on"]["APPROVE"]
    assert comparison.transitions_a == [approve[0]["id"]]
    assert comparison.transitions_b == [approve[1]["id"]]
    assert comparison.snapshot_a is not None and comparison.snapshot_a["value"] == "acting"


def test_a_transition_that_raises_is_reported_and_skipped(machine: Any, log: list[dict[str, Any]]) -> None:
    tampered = copy.deepcopy(log)
    tampered[3]["event"]["output"] = "not an object"  # recordDraft reads output["text"]
    report = verify_log(machine, tampered)
    assert report.first_divergence == 3
    exception = report.divergences[0]
    assert exception.kind == "exception" and "AttributeError" in exception.message
    # The fold kept the state before entry 3 (thinking), so entry 4's APPROVE is ignored too.
    assert report.divergences[1].index == 4 and report.divergences[1].kind == "state"


def test_an_entry_that_is_not_an_object_is_a_divergence_never_a_pass(machine: Any, log: list[dict[str, Any]]) -> None:
    from agent_explorer.eventlog.timeline import Timeline

    tampered = [*copy.deepcopy(log[:3]), ["junk"], "x", 5]
    report = verify_log(machine, tampered)
    assert not report.ok and report.first_divergence == 3
    assert [(d.index, d.kind) for d in report.divergences] == [(3, "exception"), (4, "exception"), (5, "exception")]
    assert "not a JSON object" in report.divergences[0].message
    timeline = Timeline(machine, tampered, verify=True, errors="record")
    timeline.build()
    assert timeline.verification.first is not None and timeline.verification.first.index == 3
    assert timeline.fork(4).verification.entries == 4  # a fork past such an entry counts it, without raising


def test_a_bad_errors_mode_is_refused_before_anything_is_folded(machine: Any, log: list[dict[str, Any]]) -> None:
    from agent_explorer.eventlog.fold import fold
    from agent_explorer.eventlog.timeline import Timeline

    steps = fold(machine, log, errors="bogus")  # type: ignore[arg-type]
    with pytest.raises(AgentError) as refused:
        next(steps)  # not the init step first, then the error
    assert refused.value.code == "invalid-argument"
    with pytest.raises(AgentError):
        Timeline(machine, log, lazy=True, errors="bogus")  # type: ignore[arg-type]


def test_a_log_cut_mid_flight(machine: Any, log: list[dict[str, Any]], tmp_path: Path) -> None:
    from agent_explorer.eventlog.files import read_log, write_log

    path = tmp_path / "run.jsonl"
    write_log(path, log[:9])  # 8 is a draft completion; 9 (REJECT) is written half
    whole = path.read_bytes()
    write_log(path, log[:10])
    cut = path.read_bytes()[: len(whole) + 20]
    path.write_bytes(cut)
    with pytest.raises(AgentLogFormatError) as caught:
        read_log(path)
    assert caught.value.truncated is True
    assert caught.value.line == 10  # entry 9 is on line 10

    kept = read_log(path, on_truncated="drop")
    assert len(kept) == 9
    report = verify_log(machine, kept)
    assert report.ok and report.entries == 9
    state = replay(machine, kept).snapshot
    assert state.value == "deciding"
    # The frontier is mid-flight: the decision's timeout timer is pending, so the state cannot
    # be cached as a snapshot, while the log (which can carry it) replays fine.
    assert [item.kind for item in find_in_flight(machine, state, kept)] == ["timer"]
    with pytest.raises(AgentError) as refused:
        persist_snapshot(machine, state, kept, "run")
    assert refused.value.code == "not-quiescent"
    assert "timer" in str(refused.value)


def test_a_log_cut_while_a_request_is_in_flight(machine: Any, log: list[dict[str, Any]]) -> None:
    cut = log[:7]  # 6 is an ASK: the draft request is running, its completion not journaled
    report = verify_log(machine, cut)
    assert report.ok
    assert report.final_persisted_snapshot is not None
    assert report.final_persisted_snapshot["children"]["draft"]["snapshot"]["status"] == "active"
    in_flight = find_in_flight(machine, replay(machine, cut).snapshot, cut)
    assert [(item.kind, item.id) for item in in_flight] == [("child", "draft")]


def test_strict_report_lists_entries_without_a_hash(machine: Any, log: list[dict[str, Any]]) -> None:
    tampered = copy.deepcopy(log)
    for index in (0, 12, 20):
        del tampered[index]["verification"]
    assert verify_log(machine, tampered).ok
    report = verify_log(machine, tampered, strict=True)
    assert report.divergent_indices == [0, 12, 20]
    assert {d.kind for d in report.divergences} == {"missing-verification"}
    assert report.unverified == 3 and report.checked == 32


def test_report_converts_to_pandas(machine: Any, log: list[dict[str, Any]]) -> None:
    tampered = copy.deepcopy(log)
    tampered[17]["verification"]["stateHash"] = "f" * 64
    tampered[20]["verification"]["stateHash"] = "e" * 64
    frame = verify_log(machine, tampered).to_pandas()
    assert list(frame["index"]) == [17, 20]
    assert list(frame["kind"]) == ["state", "state"]
    assert list(frame["expected_hash"]) == ["f" * 64, "e" * 64]
    assert list(frame["event_id"]) == [log[17]["id"], log[20]["id"]]
    assert verify_log(machine, log).to_pandas().empty


def test_report_progress_and_version_precondition(machine: Any, log: list[dict[str, Any]]) -> None:
    done: list[int] = []
    verify_log(machine, log, progress=done.append)
    assert done == list(range(1, 36))
    other = agent_machine(version="2")
    with pytest.raises(AgentError) as caught:
        verify_log(other, log)
    assert caught.value.code == "machine-version-mismatch"
    # Folding it anyway shows the states agree (only the stamp differs).
    assert verify_log(other, log, check_version=False).ok
