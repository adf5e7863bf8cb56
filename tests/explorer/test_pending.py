"""Pending work after any entry: timers armed, children in flight, owed effects, read off the line's one fold.

The line's Timeline carries the runtime's effect ledger in its checkpoints. The reference is
`steps.replay(machine, entries[:i + 1]).effects`, the step path's own answer, which refolds the prefix; the
line must agree with it at every index, asked in any order.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from sample_run import long_events, record

from agent_explorer import read_log
from agent_explorer.eventlog.timeline import Timeline
from agent_explorer.explorer import Explorer
from agent_explorer.explorer.pending import Pending, after_event_parts, pending_at
from agent_explorer.runtime.effects import EffectLedger
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


class Line:
    """A line's fold with the effect ledger, as the explorer opens it, with a chosen checkpoint interval."""

    def __init__(self, machine: Any, log: list[dict[str, Any]], every: int | None = None) -> None:
        self.timeline = Timeline(machine, log, checkpoint_every=every, ledger=EffectLedger.start_from)

    def at(self, index: int) -> Pending:
        return pending_at(self.timeline.point_at(index, traced=False))


@pytest.mark.parametrize(("name", "machine"), SAMPLES, ids=[n for n, _ in SAMPLES])
def test_owed_at_every_index_equals_the_step_path_replay(name: str, machine: Any) -> None:
    log = list(read_log(LOGS / f"{name}.jsonl"))
    index = Line(machine, log, every=4)  # small K: most answers come from a checkpoint plus steps
    order = list(range(len(log)))
    random.Random(7).shuffle(order)
    for i in order:
        assert key(index.at(i).owed) == key(replay(machine, log[: i + 1]).effects), f"{name} at {i}"


def test_the_approval_timer_is_armed_until_it_fires() -> None:
    log = list(read_log(LOGS / "support_ignored.jsonl"))
    index = Line(support_agent, log)
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
    index = Line(support_agent, log)
    flying = {i: [(c.id, c.kind, c.request_id, c.requested_at) for c in index.at(i).inflight] for i in range(len(log))}
    assert flying[0] == [("lookupOrder", "task", "lookupOrder#1", 0)]
    assert flying[3] == [("draft", "text", "draft#1", 2)]  # a usage record changes nothing
    assert flying[4] == [("chooseAction", "decision", "chooseAction#1", 4)]
    assert flying[7] == []  # waiting for a person: only the timer
    assert flying[8] == [("issueRefund", "task", "issueRefund#1", 8)]
    assert flying[11] == []  # done: nothing is owed


def test_a_cold_jump_costs_one_copy_and_at_most_k_steps(machine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    log = record(machine, long_events(3000))
    index = Line(machine, log, every=32)
    steps: list[int] = []
    real = EffectLedger.step
    monkeypatch.setattr(EffectLedger, "step", lambda self, step: steps.append(1) or real(self, step))
    for i in random.Random(3).sample(range(len(log)), 40):
        steps.clear()
        index.timeline._cache.clear()  # a cold jump: nothing near it is cached
        owed = index.at(i).owed
        assert len(steps) <= 32, f"{len(steps)} ledger steps for index {i}"  # L = min(K, 64) = 32
        assert key(owed) == key(replay(machine, log[: i + 1]).effects)


def test_a_fork_shares_the_checkpoints_below_its_cut(machine: Any) -> None:
    log = record(machine, long_events(300))
    parent = Line(machine, log, every=16)
    child = object.__new__(Line)
    child.timeline = parent.timeline.fork(200)
    assert child.timeline._checkpoints[:12] == parent.timeline._checkpoints[:12]
    assert child.timeline._ledgers[:12] == parent.timeline._ledgers[:12]  # the very ledger copies, shared
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
    """No "first 400 entries only", and no "derive on request": every frame carries what is owed there,
    read off the same fold as its state."""
    log = record(machine, long_events(3000))
    ex = Explorer(machine, log)
    # long_events cycles NOTE, START, TICK, TICK, DONE, REVISE, TICK, CANCEL (a usage record every 5th):
    # find an index in `writing`, where the 500 ms timer is armed
    timeline = ex.line.timeline
    i = next(i for i in range(2500, 2600) if "writing" in timeline.state_at(i).value.get("working", {}).get("draft", ""))
    ex.index = i
    frame = ex.frame
    assert [t["event"] for t in frame["timers"]] == ["xstate.after.500.agent.working.draft.writing"]
    assert frame["effects"] == [
        {"kind": e.kind, "site": e.site, "requestId": e.request_id, "detail": f"fires after {e.delay} ms"}
        for e in replay(machine, log[: i + 1]).effects
    ]
    assert ex.pending().to_pandas()["kind"].tolist() == ["delay"]
    for j in random.Random(5).sample(range(len(log)), 25):
        ex.index = j
        pending = ex.pending().to_json()
        assert ex.frame["effects"] == pending["owed"], j
        assert ex.frame["timers"] == pending["timers"] and ex.frame["inflight"] == pending["inflight"], j


@pytest.mark.parametrize(("name", "machine"), [("planner_trip", planner_agent), ("support_whatif", support_agent)])
def test_checkpoints_keep_only_the_trails_of_plans_still_owed(name: str, machine: Any) -> None:
    """Decisions answered leave a trail key each; a checkpoint carrying them all would grow with the log."""
    log = list(read_log(LOGS / f"{name}.jsonl"))
    timeline = Line(machine, log, every=1).timeline
    live = timeline._frontier_ledger.counts.trail  # type: ignore[union-attr]
    assert live, "the live fold keeps every trail"
    ledgers = list(timeline._ledgers)
    for ledger in ledgers:
        plans = {e.request_id for e in ledger._pending.values() if e.kind == "plan"}  # type: ignore[union-attr]
        assert set(ledger.counts.trail) <= plans  # type: ignore[union-attr]
    if name == "planner_trip":
        assert any(ledger.counts.trail for ledger in ledgers), "a plan in flight keeps its trail"  # type: ignore[union-attr]
