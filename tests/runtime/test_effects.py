"""get_agent_effects and the step path's replay (docs/semantics/step-path.md "Ordering",
"Request ids: site#occurrence", "Crash recovery by replay") on real engine machines."""

from __future__ import annotations

import pytest

from agent_explorer import replay as log_replay
from agent_explorer.engine import initial_transition, transition
from agent_explorer.errors import AgentLogFormatError
from agent_explorer.eventlog.entries import create_replay_entry, init_entry
from agent_explorer.steps import (
    get_agent_effects,
    replay,
    to_done_event,
    to_error_event,
)

from .machines import (
    FULL_INPUT,
    NOTIFIED,
    full_machine,
    order_machine,
    retry_machine,
    timer_machine,
)


def test_entry_action_spawn_and_send_lower_in_document_order() -> None:
    # An entry action, then a spawn, then a send to that spawned child: execute, task, execute.
    snapshot, actions = initial_transition(order_machine)
    effects = get_agent_effects(order_machine, snapshot, actions, history=[{"type": "@agent.init"}])
    assert [e.kind for e in effects] == ["execute", "task", "execute"]
    assert effects[1].request_id == "job1#1"
    assert effects[2].action.type == "xstate.sendTo" and effects[2].action.params["to"] == "job1"
    # Running the execute effect runs the custom action once, here, at the frontier.
    NOTIFIED.clear()
    effects[0].exec()
    assert NOTIFIED == ["notify"]


def test_a_retry_after_an_error_is_a_fresh_occurrence() -> None:
    entries = [init_entry(retry_machine, now=lambda: _T0, id="e0")]
    snapshot, actions = initial_transition(retry_machine)
    first = get_agent_effects(retry_machine, snapshot, actions, history=entries)
    assert [(e.kind, e.request_id) for e in first] == [("task", "job#1")]
    # The error completion is journaled; onError re-enters, spawning the job again.
    error_event = first[0].to_error_event(RuntimeError("flaky"))
    assert error_event == {"type": "xstate.error.actor.job", "error": {"name": "RuntimeError", "message": "flaky"}}
    snapshot, actions = transition(retry_machine, snapshot, error_event)
    entries.append(create_replay_entry(retry_machine, error_event, 1, snapshot_after=snapshot, id="e1", now=lambda: _T0))
    second = get_agent_effects(retry_machine, snapshot, actions, history=entries)
    assert [e.request_id for e in second] == ["job#2"]
    # Same journal, same ids: replay derives the identical owed request.
    assert [e.request_id for e in replay(retry_machine, entries).effects] == ["job#2"]
    assert [e.request_id for e in log_replay(retry_machine, entries).effects] == ["job#2"]


def test_partly_completed_fan_out_owes_exactly_the_missing_branches() -> None:
    # Drive the full machine to its fan-out by hand, journal 2 of 3 branch completions, "crash".
    entries: list[dict] = [init_entry(full_machine, input=FULL_INPUT, id="e0", now=lambda: _T0)]
    snapshot, actions = initial_transition(full_machine, input=FULL_INPUT)
    script = [
        to_done_event("lookup", {"facts": "facts about tides"}),
        to_done_event("draft", {"text": "A draft about tides"}),
        {"type": "ACCEPT"},
        {"type": "xstate.after.1000.full.waiting"},
    ]
    for event in script:
        snapshot, actions = transition(full_machine, snapshot, event)
        entries.append(create_replay_entry(full_machine, event, len(entries), snapshot_after=snapshot, id=f"e{len(entries)}", now=lambda: _T0))
    frontier = get_agent_effects(full_machine, snapshot, actions, history=entries)
    # Leaving `waiting` cancels its (already fired) timer, then the three spawns, in order.
    assert [(e.kind, e.request_id) for e in frontier] == [
        ("execute", None), ("text", "b0#1"), ("text", "b1#1"), ("text", "b2#1")
    ]
    assert frontier[0].action.type == "xstate.cancel"
    frontier = frontier[1:]
    assert frontier[0].request.prompt == "Branch for A draft about tides"
    assert frontier[0].request.input == {"n": 0}
    for branch in ("b2", "b0"):
        event = to_done_event(branch, {"text": "branch text"})
        snapshot, actions = transition(full_machine, snapshot, event)
        entries.append(create_replay_entry(full_machine, event, len(entries), snapshot_after=snapshot, id=f"e{len(entries)}", now=lambda: _T0))
    recovered = replay(full_machine, entries)
    assert [(e.kind, e.request_id) for e in recovered.effects] == [("text", "b1#1")]
    # The recovered request is the one the live frontier surfaced (same prompt, same input).
    assert recovered.effects[0].request == frontier[1].request
    # The thin path agrees: the last transition's actions plus the snapshot-only owed branch.
    assert [e.request_id for e in get_agent_effects(full_machine, snapshot, actions, history=entries)] == ["b1#1"]
    assert [e.request_id for e in log_replay(full_machine, entries).effects] == ["b1#1"]
    # Completing the owed branch finishes the run.
    final, _ = transition(full_machine, recovered.snapshot, recovered.effects[0].to_done_event({"text": "branch text"}))
    assert final.status == "done"
    assert final.output["branches"] == {"b0": "branch text", "b1": "branch text", "b2": "branch text"}


def test_without_a_foldable_history_present_children_without_completion_are_owed() -> None:
    # Bare events that do not start at init: the snapshot-only rule (child present, no completion).
    snapshot, _ = initial_transition(full_machine, input=FULL_INPUT)
    effects = get_agent_effects(full_machine, snapshot, [], history=[])
    assert [e.request_id for e in effects] == ["lookup#1"]
    done = to_done_event("lookup", {"facts": "f"})
    assert get_agent_effects(full_machine, snapshot, [], history=[done]) == []


def test_timers_surface_as_delay_effects_and_cancel_as_execute() -> None:
    snapshot, actions = initial_transition(timer_machine)
    effects = get_agent_effects(timer_machine, snapshot, actions, history=[{"type": "@agent.init"}])
    assert [(e.kind, e.request_id, e.delay) for e in effects] == [
        ("delay", "xstate.after.500.timer.waiting#1", 500)
    ]
    assert effects[0].event == {"type": "xstate.after.500.timer.waiting"}
    history = [{"type": "@agent.init"}, {"type": "GO"}]
    snapshot, actions = transition(timer_machine, snapshot, {"type": "GO"})
    effects = get_agent_effects(timer_machine, snapshot, actions, history=history)
    # Leaving `waiting` cancels its timer (execute); entering `going` schedules the delayed raise.
    assert [e.kind for e in effects] == ["execute", "delay"]
    assert effects[0].send_id == "xstate.after.500.timer.waiting"
    assert (effects[1].request_id, effects[1].event, effects[1].delay) == ("tick#1", {"type": "TICK"}, 200)
    assert [e.request_id for e in replay(timer_machine, history).effects] == ["tick#1"]


def test_errors_are_normalised() -> None:
    try:
        try:
            raise KeyError("inner")
        except KeyError as inner:
            raise ValueError("outer") from inner
    except ValueError as error:
        event = to_error_event("job", error)
    assert event["error"]["name"] == "ValueError"
    assert event["error"]["cause"]["name"] == "KeyError"
    with pytest.raises(AgentLogFormatError):
        replay(full_machine, [])


from datetime import UTC, datetime

_T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_the_incremental_fold_never_serves_a_stale_journal() -> None:
    # A host loop reuses one growing list; editing it in place must refold, not reuse.
    entries: list[dict] = [init_entry(retry_machine, id="e0", now=lambda: _T0)]
    snapshot, actions = initial_transition(retry_machine)
    assert [e.request_id for e in get_agent_effects(retry_machine, snapshot, actions, history=entries)] == ["job#1"]
    for index in (1, 2):
        failed = to_error_event("job", RuntimeError(f"down {index}"))
        snapshot, actions = transition(retry_machine, snapshot, failed)
        entries.append(create_replay_entry(retry_machine, failed, index, snapshot_after=snapshot, id=f"e{index}", now=lambda: _T0))
    assert [e.request_id for e in get_agent_effects(retry_machine, snapshot, actions, history=entries)] == ["job#3"]
    # Swap the middle entry for a non-completion (same length, same first and last objects).
    entries[1] = create_replay_entry(retry_machine, {"type": "UNRELATED"}, 1, id="e1b", now=lambda: _T0)
    fresh = get_agent_effects(retry_machine, snapshot, [], history=list(entries))
    reused = get_agent_effects(retry_machine, snapshot, [], history=entries)
    assert [e.request_id for e in reused] == [e.request_id for e in fresh] == ["job#2"]


async def test_effects_over_prefixes_of_one_log_match_a_fresh_fold_scrubbing_both_ways() -> None:
    from agent_explorer.runtime import run_agent
    from agent_explorer.runtime.effects import fold_ledger
    from agent_explorer.steps import replay as steps_replay

    from .machines import full_model

    result = await run_agent(full_machine, input=FULL_INPUT, executors=full_model(), timers="run", time_scale=0.0)
    log = result.events
    # Forward, then backward, then forward again: a timeline asking for successive prefixes.
    order = [*range(1, len(log) + 1), *range(len(log), 0, -3), *range(2, len(log) + 1, 4)]
    for cut in order:
        prefix = log[:cut]
        snapshot, actions, _, _ = fold_ledger(full_machine, [dict(e) for e in prefix])
        cached = get_agent_effects(full_machine, snapshot, actions, history=prefix)
        fresh = get_agent_effects(full_machine, snapshot, actions, history=[dict(e) for e in prefix])
        assert [(e.kind, e.request_id, e.request) for e in cached] == [(e.kind, e.request_id, e.request) for e in fresh], cut
        owed = {e.request_id for e in steps_replay(full_machine, prefix).effects}
        assert owed == {e.request_id for e in cached if e.kind != "execute"}
