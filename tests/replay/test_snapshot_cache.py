"""Snapshot as cache: agentMeta, the fast path, snapshot-diverged, quiescence."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from agent_explorer.errors import AgentError, AgentSnapshotDivergedError
from agent_explorer.eventlog.entries import fork_event_log
from agent_explorer.eventlog.replay import replay
from agent_explorer.eventlog.snapshot_cache import find_in_flight, persist_snapshot, resume_state

from .machines import CANCEL, agent_machine, ask, record


def cached(machine: Any, log: list[dict[str, Any]], log_id: str = "thread-1") -> dict[str, Any]:
    return persist_snapshot(machine, replay(machine, log).snapshot, log, log_id)


def test_persist_stamps_agent_meta(machine: Any, log: list[dict[str, Any]]) -> None:
    snapshot = cached(machine, log)
    assert snapshot["agentMeta"] == {
        "machineId": "agent", "version": machine.version, "logId": "thread-1", "logIndex": len(log),
    }
    without = {k: v for k, v in snapshot.items() if k != "agentMeta"}
    assert without == replay(machine, log).persisted_snapshot


def test_fast_path_when_log_id_length_and_tail_hash_match(machine: Any, log: list[dict[str, Any]]) -> None:
    snapshot = cached(machine, log)
    resumed = resume_state(machine, log, snapshot, log_id="thread-1")
    assert resumed.path == "fast" and resumed.replayed is None
    assert machine.get_persisted_snapshot(resumed.snapshot) == replay(machine, log).persisted_snapshot


@pytest.mark.parametrize(
    ("log_id", "why"),
    [("thread-2", "another log"), (None, "another log")],
    ids=["sibling-thread", "no-log-id"],
)
def test_another_log_at_the_same_length_replays(
    machine: Any, log: list[dict[str, Any]], log_id: str | None, why: str
) -> None:
    resumed = resume_state(machine, log, cached(machine, log), log_id=log_id)
    assert resumed.path == "replay" and why in resumed.reason


def test_a_stale_cache_replays_and_agrees(machine: Any, log: list[dict[str, Any]]) -> None:
    older = fork_event_log(log, 13)
    snapshot = cached(machine, older)
    resumed = resume_state(machine, log, snapshot, log_id="thread-1")
    assert resumed.path == "replay" and "index 13" in resumed.reason
    assert resumed.persisted_snapshot == replay(machine, log).persisted_snapshot


def test_a_cache_that_disagrees_with_the_log_raises(machine: Any, log: list[dict[str, Any]]) -> None:
    snapshot = cached(machine, log)
    snapshot["context"]["approved"] = 99  # the cache drifted from the log
    with pytest.raises(AgentSnapshotDivergedError) as caught:
        resume_state(machine, log, snapshot, log_id="thread-1")
    assert caught.value.code == "snapshot-diverged"
    assert caught.value.log_index == len(log)


def test_a_stale_cache_that_disagrees_at_its_index_raises(machine: Any, log: list[dict[str, Any]]) -> None:
    snapshot = cached(machine, fork_event_log(log, 13))
    snapshot["context"]["drafts"] = -1
    with pytest.raises(AgentSnapshotDivergedError) as caught:
        resume_state(machine, log, snapshot, log_id="thread-1")
    assert caught.value.log_index == 13


def test_a_cache_ahead_of_the_log_raises(machine: Any, log: list[dict[str, Any]]) -> None:
    snapshot = cached(machine, log)
    with pytest.raises(AgentSnapshotDivergedError):
        resume_state(machine, log[:10], snapshot, log_id="thread-1")


def test_same_length_different_history_is_not_the_fast_path(machine: Any, log: list[dict[str, Any]]) -> None:
    # A fork that diverged at the same length: the tail hash ties the cache to its own history.
    snapshot = cached(machine, log)
    other = record(machine, [ask("q"), CANCEL] * 17, input={"question": "hello"})
    assert len(other) == len(log)
    with pytest.raises(AgentSnapshotDivergedError):
        resume_state(machine, other, snapshot, log_id="thread-1")


def test_no_snapshot_or_no_meta_replays(machine: Any, log: list[dict[str, Any]]) -> None:
    assert resume_state(machine, log).path == "replay"
    plain = replay(machine, log).persisted_snapshot
    resumed = resume_state(machine, log, plain, log_id="thread-1")
    assert resumed.path == "replay" and "agentMeta" in resumed.reason


def test_another_machine_version_does_not_use_the_cache(log: list[dict[str, Any]], machine: Any) -> None:
    snapshot = cached(machine, log)
    snapshot["agentMeta"]["version"] = "older"
    assert resume_state(machine, log, snapshot, log_id="thread-1").path == "replay"


def test_refuses_to_snapshot_mid_flight(machine: Any, log: list[dict[str, Any]]) -> None:
    running = log[:7]  # ASK of turn 1: the draft request is in flight
    state = replay(machine, running).snapshot
    with pytest.raises(AgentError) as caught:
        persist_snapshot(machine, state, running, "thread-1")
    assert caught.value.code == "not-quiescent"
    assert "'draft'" in str(caught.value) and "index 7" in str(caught.value)
    assert [item.id for item in caught.value.in_flight] == ["draft"]


def test_refuses_a_snapshot_that_is_not_the_log_tail(machine: Any, log: list[dict[str, Any]]) -> None:
    with pytest.raises(AgentSnapshotDivergedError):
        persist_snapshot(machine, replay(machine, log[:6]).snapshot, log, "thread-1")


def test_pending_delayed_raise_is_in_flight() -> None:
    machine = _nudger()
    armed = record(machine, [{"type": "ARM"}])
    state = replay(machine, armed).snapshot
    assert [(i.kind, i.id) for i in find_in_flight(machine, state, armed)] == [("delayed-event", "nudge")]
    fired = record(machine, [{"type": "ARM"}, {"type": "NUDGE"}])
    assert find_in_flight(machine, replay(machine, fired).snapshot, fired) == []
    cancelled = record(machine, [{"type": "ARM"}, {"type": "DISARM"}])
    assert find_in_flight(machine, replay(machine, cancelled).snapshot, cancelled) == []
    assert persist_snapshot(machine, replay(machine, cancelled).snapshot, cancelled, "n")["agentMeta"]["logIndex"] == 3


def _nudger() -> Any:
    from agent_explorer.engine import cancel, raise_, setup

    return setup(actions={"cancelNudge": cancel("nudge")}).create_machine({
        "id": "nudger",
        "initial": "idle",
        "states": {
            "idle": {"on": {
                "ARM": {"actions": raise_({"type": "NUDGE"}, delay=1000, id="nudge")},
                "DISARM": {"actions": "cancelNudge"},
                "NUDGE": {"target": "nudged"},
            }},
            "nudged": {},
        },
    })


def test_quiescent_idle_state_has_nothing_in_flight(machine: Any, log: list[dict[str, Any]]) -> None:
    assert find_in_flight(machine, replay(machine, log).snapshot, log) == []
    assert find_in_flight(agent_machine(), replay(machine, log).persisted_snapshot) == []


def test_cache_inputs_are_not_mutated(machine: Any, log: list[dict[str, Any]]) -> None:
    snapshot = cached(machine, log)
    before = copy.deepcopy(snapshot), copy.deepcopy(log)
    resume_state(machine, log, snapshot, log_id="thread-1")
    resume_state(machine, log, snapshot, log_id="other")
    assert (snapshot, log) == before
