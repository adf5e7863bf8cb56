"""Pending work after any entry: timers armed, children in flight, owed effects, from a checkpointed ledger.

The reference is `steps.replay(machine, entries[:i + 1]).effects`, the step path's own answer, which refolds the
prefix; the checkpointed index must agree with it at every index, asked in any order.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from sample_run import long_events, record

from agent_explorer import read_log
from agent_explorer.explorer import Explorer
from agent_explorer.explorer import pending as pending_module
from agent_explorer.explorer.pending import PendingIndex, after_event_parts
from agent_explorer.samples import planner_agent, research_agent, support_agent
from agent_explorer.steps import replay

LOGS = Path(__file__).parents[2] / "sample_logs"
SAMPLES = [
    ("support_clean", support_agent),
    ("support_ignored", support_agent),
    ("support_whatif", support_agent),
    ("support_crashed", support_agent),
    ("research_race", research_agent),
    ("planner_trip", planner_agent),
]


def key(effects: Any) -> list[tuple[Any, ...]]:
    return [(e.kind, e.site, e.request_id, e.delay) for e in effects]


@pytest.mark.parametrize(("name", "machine"), SAMPLES, ids=[n for n, _ in SAMPLES])
def test_owed_at_every_index_equals_the_step_path_replay(name: str, machine: Any) -> None:
    log = list(read_log(LOGS / f"{name}.jsonl"))
    index = PendingIndex(machine, log, every=4)  # small K: most answers come from a checkpoint plus steps
    order = list(range(len(log)))
    random.Random(7).shuffle(order)
    for i in order:
        assert key(index.at(i).owed) == key(replay(machine, log[: i + 1]).effects), f"{name} at {i}"


def test_the_approval_timer_is_armed_until_it_fires() -> None:
    log = list(read_log(LOGS / "support_ignored.jsonl"))
    index = PendingIndex(support_agent, log)
    timer_type = "xstate.after.approvalTimeout.support.awaitingApproval"
    for i in range(len(log)):
        timers = index.at(i).timers
        if 6 <= i <= 9:  # OFFER_REFUND enters awaitingApproval; two ignored replies; then the timer fires
            [timer] = timers
            assert (timer.event["type"], timer.delay, timer.state_id, timer.armed_at) == (
                timer_type, 4 * 60 * 60 * 1000, "support.awaitingApproval", 6
            )
        else:
            assert timers == [], i
    assert log[10]["event"]["type"] == timer_type


def test_children_in_flight_carry_their_request_ids() -> None:
    log = list(read_log(LOGS / "support_clean.jsonl"))
    index = PendingIndex(support_agent, log)
    flying = {i: [(c.id, c.kind, c.request_id, c.requested_at) for c in index.at(i).inflight] for i in range(len(log))}
    assert flying[0] == [("lookupOrder", "task", "lookupOrder#1", 0)]
    assert flying[3] == [("draft", "text", "draft#1", 2)]  # a usage record changes nothing
    assert flying[4] == [("chooseAction", "decision", "chooseAction#1", 4)]
    assert flying[7] == []  # waiting for a person: only the timer
    assert flying[8] == [("issueRefund", "task", "issueRefund#1", 8)]
    assert flying[11] == []  # done: nothing is owed


def test_a_cold_jump_costs_one_copy_and_at_most_k_steps(machine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    log = record(machine, long_events(3000))
    index = PendingIndex(machine, log, every=32)
    index.build()
    steps: list[int] = []
    real = pending_module.fold_step
    monkeypatch.setattr(pending_module, "fold_step", lambda *a: steps.append(1) or real(*a))
    for i in random.Random(3).sample(range(len(log)), 40):
        steps.clear()
        owed = index.at(i).owed
        assert len(steps) <= 32, f"{len(steps)} steps for index {i}"
        monkeypatch.setattr(pending_module, "fold_step", real)
        assert key(owed) == key(replay(machine, log[: i + 1]).effects)
        monkeypatch.setattr(pending_module, "fold_step", lambda *a: steps.append(1) or real(*a))


def test_a_fork_shares_the_checkpoints_below_its_cut(machine: Any) -> None:
    log = record(machine, long_events(300))
    parent = PendingIndex(machine, log, every=16)
    child = PendingIndex.fork(parent, log[:200], 200)
    assert child._checkpoints[:12] == parent._checkpoints[:12]
    for i in (0, 17, 150, 199):
        assert key(child.at(i).owed) == key(parent.at(i).owed)


def test_after_event_parts() -> None:
    assert after_event_parts("xstate.after.500.agent.working.draft.writing") == ("500", "agent.working.draft.writing")
    assert after_event_parts("xstate.after.approvalTimeout.support.awaitingApproval") == (
        "approvalTimeout",
        "support.awaitingApproval",
    )
    assert after_event_parts("xstate.done.actor.x") is None and after_event_parts("xstate.after.5") is None


def test_the_frame_shows_timers_and_owed_effects_far_into_a_long_log(machine: Any) -> None:
    """No more "first 400 entries only": the frame at 2,500 carries what is owed there, cheaply."""
    log = record(machine, long_events(3000))
    ex = Explorer(machine, log)
    # long_events cycles NOTE, START, TICK, TICK, DONE, REVISE, TICK, CANCEL (a usage record every 5th):
    # find an index in `writing`, where the 500 ms timer is armed
    i = next(i for i in range(2500, 2600) if "writing" in ex._source.state_at(i).value.get("working", {}).get("draft", ""))
    ex.index = i
    frame = ex.frame
    assert frame["effectsNote"] is None
    assert [t["event"] for t in frame["timers"]] == ["xstate.after.500.agent.working.draft.writing"]
    assert frame["effects"] == [
        {"kind": e.kind, "site": e.site, "requestId": e.request_id, "detail": f"fires after {e.delay} ms"}
        for e in replay(machine, log[: i + 1]).effects
    ]
    assert ex.pending().to_pandas()["kind"].tolist() == ["delay"]


def test_deriving_effects_on_request_fills_timers_and_children_too(
    machine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the frame budget the panel offers a button; what it derives is the whole pending block, not only
    the effects (the timers and children in flight sections must not stay blank)."""
    log = record(machine, long_events(300))
    ex = Explorer(machine, log)
    monkeypatch.setattr(pending_module, "FRAME_BUDGET", -len(log))  # every index is "too far ahead"
    i = next(i for i in range(100, 200) if "writing" in ex._source.state_at(i).value.get("working", {}).get("draft", ""))
    ex.index = i
    assert ex.frame["effects"] is None and ex.frame["timers"] is None and ex.frame["effectsNote"]
    ex._on_message(ex, {"kind": "effects"}, [])
    pending = ex.pending().to_json()
    assert ex.frame["effects"] == pending["owed"] and ex.frame["effectsNote"] is None
    assert ex.frame["timers"] == pending["timers"] and ex.frame["inflight"] == pending["inflight"]
    assert [t["event"] for t in ex.frame["timers"]] == ["xstate.after.500.agent.working.draft.writing"]


@pytest.mark.parametrize(("name", "machine"), [("planner_trip", planner_agent), ("support_whatif", support_agent)])
def test_checkpoints_keep_only_the_trails_of_plans_still_owed(name: str, machine: Any) -> None:
    """Decisions answered leave a trail key each; a checkpoint carrying them all would grow with the log."""
    log = list(read_log(LOGS / f"{name}.jsonl"))
    index = PendingIndex(machine, log, every=1)
    index.build()
    live = index._frontier_state[1].counts.trail
    assert live, "the live fold keeps every trail"
    for _, ledger in index._checkpoints:
        plans = {e.request_id for e in ledger._pending.values() if e.kind == "plan"}
        assert set(ledger.counts.trail) <= plans
    if name == "planner_trip":
        assert any(ledger.counts.trail for _, ledger in index._checkpoints), "a plan in flight keeps its trail"
