"""A log written out by hand, with hashes of snapshots written out by hand: replay agrees."""

from __future__ import annotations

from typing import Any

import pytest

from agent_explorer.canonical.jcs import state_hash
from agent_explorer.engine import assign, setup
from agent_explorer.errors import AgentReplayDivergenceError
from agent_explorer.eventlog.replay import replay
from agent_explorer.eventlog.timeline import Timeline
from agent_explorer.eventlog.verification import verify_log


@pytest.fixture
def toggle() -> Any:
    return setup(
        actions={"count": assign({"flips": lambda context, event, params: context["flips"] + event.get("by", 1)})},
    ).create_machine({
        "id": "toggle",
        "version": "1",
        "context": {"flips": 0},
        "initial": "off",
        "states": {
            "off": {"on": {"FLIP": {"target": "on", "actions": "count"}}},
            "on": {"on": {"FLIP": {"target": "off", "actions": "count"}, "BREAK": {"target": "broken"}}},
            "broken": {"type": "final"},
        },
    })


def snapshot(value: str, flips: int, status: str = "active") -> dict[str, Any]:
    return {"status": status, "value": value, "historyValue": {}, "context": {"flips": flips}, "children": {}}


EXPECTED = [snapshot("off", 0), snapshot("on", 1), snapshot("on", 1), snapshot("off", 4), snapshot("on", 5),
            snapshot("broken", 5, "done")]


def entry(index: int, event: dict[str, Any], after: dict[str, Any] | None) -> dict[str, Any]:
    written: dict[str, Any] = {
        "schemaVersion": 1,
        "id": f"hand-{index}",
        "index": index,
        "recordedAt": f"2026-03-01T12:00:0{index}.000Z",
        "machineId": "toggle",
        "machineVersion": "1",
        "event": event,
    }
    if after is not None:
        written["verification"] = {"stateHash": state_hash(after)}
    return written


HAND_LOG = [
    entry(0, {"type": "@agent.init"}, EXPECTED[0]),
    entry(1, {"type": "FLIP"}, EXPECTED[1]),
    entry(2, {"type": "@agent.usage", "requestId": "r#1", "model": "m", "usage": {"totalTokens": 7}}, EXPECTED[2]),
    entry(3, {"type": "FLIP", "by": 3}, None),  # recorded without a hash
    entry(4, {"type": "FLIP"}, EXPECTED[4]),
    entry(5, {"type": "BREAK"}, EXPECTED[5]),
]


def test_replay_reaches_each_hand_written_state(toggle: Any) -> None:
    for n in range(1, len(HAND_LOG) + 1):
        folded = replay(toggle, HAND_LOG[:n])
        assert folded.persisted_snapshot == EXPECTED[n - 1]
    final = replay(toggle, HAND_LOG)
    assert final.snapshot.status == "done" and final.checked == 5
    report = verify_log(toggle, HAND_LOG)
    assert report.ok and (report.checked, report.unverified, report.usage) == (5, 1, 1)
    assert [Timeline(toggle, HAND_LOG).persisted_at(i) for i in range(6)] == EXPECTED


def test_a_hand_written_wrong_state_is_caught(toggle: Any) -> None:
    wrong = [*HAND_LOG[:4], entry(4, {"type": "FLIP"}, snapshot("on", 4)), *HAND_LOG[5:]]
    with pytest.raises(AgentReplayDivergenceError) as caught:
        replay(toggle, wrong)
    assert (caught.value.index, caught.value.kind, caught.value.event_id) == (4, "state", "hand-4")
    assert caught.value.expected_hash == state_hash(snapshot("on", 4))
    assert caught.value.actual_hash == state_hash(EXPECTED[4])
