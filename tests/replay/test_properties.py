"""Properties over random event sequences: replay equals the live fold; state_at equals replay."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_explorer.eventlog.diff import diff_snapshots, json_equal
from agent_explorer.eventlog.replay import replay
from agent_explorer.eventlog.timeline import Timeline
from agent_explorer.eventlog.verification import verify_log

from .machines import WORKSPACE_EVENTS, agent_machine, live_states, record, workspace_machine
from .strategies import events

MACHINE = agent_machine()
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(events)
def test_replay_equals_folding_live(sequence: list[dict[str, Any]]) -> None:
    log = record(MACHINE, sequence, input={"question": "q"})
    live = live_states(MACHINE, log)
    result = replay(MACHINE, log, verify="strict")  # the hashes were taken live
    assert result.persisted_snapshot == MACHINE.get_persisted_snapshot(live[-1])
    assert result.snapshot.value == live[-1].value
    assert result.snapshot.status == live[-1].status
    assert result.checked == len(log)


@SETTINGS
@given(events, st.integers(1, 6), st.randoms(use_true_random=False))
def test_state_at_equals_replay_of_the_prefix(sequence: list[dict[str, Any]], every: int, rng: Any) -> None:
    log = record(MACHINE, sequence)
    timeline = Timeline(MACHINE, log, checkpoint_every=every, cache_size=3)
    order = list(range(len(log)))
    rng.shuffle(order)
    for index in order:
        prefix = replay(MACHINE, log[: index + 1], verify="strict")
        assert timeline.persisted_at(index) == prefix.persisted_snapshot
        state = timeline.state_at(index)
        assert state.value == prefix.snapshot.value and state.status == prefix.snapshot.status
        assert state.context == prefix.snapshot.context
        assert timeline.hash_at(index) == log[index]["verification"]["stateHash"]
        assert timeline.verify_at(index) is None


@SETTINGS
@given(events, st.data())
def test_an_edited_hash_is_exactly_one_divergence(sequence: list[dict[str, Any]], data: st.DataObject) -> None:
    log = record(MACHINE, sequence)
    index = data.draw(st.integers(0, len(log) - 1))
    tampered = copy.deepcopy(log)
    tampered[index]["verification"]["stateHash"] = "0" * 64
    report = verify_log(MACHINE, tampered)
    assert report.divergent_indices == [index]
    assert report.final_hash == log[-1]["verification"]["stateHash"]


@SETTINGS
@given(events, events)
def test_diff_is_empty_exactly_when_snapshots_are_equal(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> None:
    left = replay(MACHINE, record(MACHINE, a)).persisted_snapshot
    right = replay(MACHINE, record(MACHINE, b)).persisted_snapshot
    changes = diff_snapshots(left, right)
    assert (changes == []) == json_equal(left, right)
    assert diff_snapshots(left, copy.deepcopy(left)) == []
    for change in changes:
        assert change.kind in ("added", "removed", "changed")


@SETTINGS
@given(events, st.data())
def test_replay_and_verify_log_agree_on_a_tampered_event(sequence: list[dict[str, Any]], data: st.DataObject) -> None:
    from agent_explorer.errors import AgentReplayDivergenceError

    from .strategies import anything

    log = record(MACHINE, sequence)
    if len(log) < 2:
        return
    index = data.draw(st.integers(1, len(log) - 1))
    tampered = copy.deepcopy(log)
    tampered[index]["event"] = data.draw(anything)
    report = verify_log(MACHINE, tampered)
    # Nothing before the edit can diverge; replay stops exactly where the report starts.
    assert report.first_divergence is None or report.first_divergence >= index
    try:
        replay(MACHINE, tampered)
    except AgentReplayDivergenceError as error:
        assert error.index == report.first_divergence and error.kind == "state"
    else:
        assert report.ok


@SETTINGS
@given(events, st.data())
def test_a_forked_timeline_is_the_prefix(sequence: list[dict[str, Any]], data: st.DataObject) -> None:
    log = record(MACHINE, sequence)
    timeline = Timeline(MACHINE, log, checkpoint_every=data.draw(st.integers(1, 5)))
    cut = data.draw(st.integers(1, len(log)))
    branch = timeline.fork(cut)
    assert len(branch) == cut
    for index in range(cut):
        assert branch.persisted_at(index) == timeline.persisted_at(index)


@SETTINGS
@given(events, st.data())
def test_a_forked_verifying_timeline_counts_as_verifying_the_prefix_does(
    sequence: list[dict[str, Any]], data: st.DataObject
) -> None:
    """The fork's counts start from the checkpoint below the cut: they must equal a verification of the
    prefix from scratch, with hashes missing and tampered on either side of a checkpoint."""
    log = copy.deepcopy(record(MACHINE, sequence))
    for index in data.draw(st.sets(st.integers(1, max(1, len(log) - 1)), max_size=4)):
        if index < len(log):
            if data.draw(st.booleans()):
                del log[index]["verification"]
            else:
                log[index]["verification"]["stateHash"] = "0" * 64
    timeline = Timeline(MACHINE, log, checkpoint_every=data.draw(st.integers(1, 5)), verify=True, errors="record")
    timeline.build()
    cut = data.draw(st.integers(1, len(log)))
    forked = timeline.fork(cut).verification
    fresh = verify_log(MACHINE, log[:cut])
    assert (forked.entries, forked.checked, forked.unverified, forked.usage) == (
        fresh.entries, fresh.checked, fresh.unverified, fresh.usage)
    assert [(d.index, d.kind) for d in forked.divergences] == [(d.index, d.kind) for d in fresh.divergences]


WORKSPACE = workspace_machine()


@SETTINGS
@given(st.lists(st.sampled_from(WORKSPACE_EVENTS), max_size=40), st.integers(1, 3))
def test_restore_based_time_travel_on_parallel_history_and_children(types: list[str], every: int) -> None:
    machine = WORKSPACE
    events = [{"type": t, "output": {"ok": True}} if t.startswith("xstate.done") else {"type": t} for t in types]
    log = record(machine, events)
    timeline = Timeline(machine, log, checkpoint_every=every, cache_size=1)
    live = live_states(machine, log)
    for index in reversed(range(len(log))):  # backwards: every state comes from a restore
        assert timeline.persisted_at(index) == machine.get_persisted_snapshot(live[index])
        assert timeline.hash_at(index) == log[index]["verification"]["stateHash"]
