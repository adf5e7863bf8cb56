"""The step path's loop (docs/semantics/step-path.md "The host loop"), written as a host would write it, journals the
same log as run_agent for the same scripted model, clock and ids."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from agent_explorer.runtime import ScriptedModel, run_agent
from agent_explorer.runtime.execute import perform_effect
from agent_explorer.steps import (
    AgentEffect,
    create_replay_entry,
    execute_agent_request,
    get_agent_effects,
    init_entry,
    initial_transition,
    replay,
    resolve_decision,
    transition,
)

from .conftest import counting_ids, ticking_clock
from .machines import FULL_INPUT, full_machine, plan_machine

MACHINE_REF = "runtime.machines:full_machine"


def quiet_model() -> ScriptedModel:
    """The full run's answers, with no usage records and no latency (a host loop journals none)."""
    text = "A draft about tides"
    return ScriptedModel(
        {"Draft about facts about tides": text, f"Branch for {text}": "branch text"},
        decisions={f"Judge: {text}": ["REVISE", "ACCEPT"]},
    )


async def resolve_effect(effect: AgentEffect, snapshot: Any, executors: Any) -> dict[str, Any] | None:
    """One frontier effect into the event to journal (None for a fire-and-forget action)."""
    if effect.kind == "execute":
        effect.exec()
        return None
    if effect.kind in ("text", "task"):
        try:
            output = await execute_agent_request(effect, executors)
        except Exception as error:  # noqa: BLE001 - a failed call is journaled as the actor's error
            return effect.to_error_event(error)
        return effect.to_done_event(output)
    if effect.kind == "decision":
        assert effect.request is not None
        return await resolve_decision(effect.request, executors.decide, can_take=snapshot.can)
    if effect.kind == "delay":
        return effect.event  # this host "sleeps" instantly: the timer fires now
    raise NotImplementedError(f"This host does not handle {effect.kind!r} effects.")


async def run_turn(
    machine: Any, input: Any, executors: Any, now: Callable[[], datetime], ids: Callable[[], str]
) -> tuple[Any, list[dict[str, Any]]]:
    execution_id = ids()
    entries = [init_entry(machine, input=input, metadata={"executionId": execution_id, "machineRef": MACHINE_REF}, now=now, id=ids())]
    snapshot, actions = initial_transition(machine, input=input)
    while snapshot.status == "active":
        effects = get_agent_effects(machine, snapshot, actions, history=entries)
        next_event: dict[str, Any] | None = None
        cause: str | None = None
        for effect in effects:
            next_event = await resolve_effect(effect, snapshot, executors)
            if next_event is not None:
                cause = effect.request_id
                break
        if next_event is None:
            break  # idle: persist `entries`, resume on the next event
        snapshot, actions = transition(machine, snapshot, next_event)
        entries.append(create_replay_entry(machine, next_event, len(entries), snapshot_after=snapshot,
                                           causation_id=cause, now=now, id=ids()))
    return snapshot, entries


async def test_the_host_loop_and_run_agent_write_the_same_log() -> None:
    host_model, run_model = quiet_model(), quiet_model()
    snapshot, host_entries = await run_turn(full_machine, FULL_INPUT, host_model, ticking_clock(), counting_ids())
    result = await run_agent(full_machine, input=FULL_INPUT, executors=run_model, now=ticking_clock(),
                             ids=counting_ids(), machine_ref=MACHINE_REF, timers="run", time_scale=0.0)
    assert snapshot.status == result.snapshot.status == "done"
    assert host_entries == result.events
    assert [c.request_id for c in host_model.calls] == [c.request_id for c in run_model.calls]
    # The journal alone rebuilds the end state: nothing is owed.
    recovered = replay(full_machine, host_entries)
    assert recovered.snapshot.output == result.output and recovered.effects == []


async def test_a_crashed_host_resumes_by_replay_and_finishes_identically() -> None:
    _, reference = await run_turn(full_machine, FULL_INPUT, quiet_model(), ticking_clock(), counting_ids())
    # Crash after the first branch completed: replay rebuilds the frontier from the journal alone.
    cut = next(i for i, e in enumerate(reference) if e["event"]["type"] == "xstate.done.actor.b0") + 1
    entries = reference[:cut]
    snapshot, owed = replay(full_machine, entries)
    assert [e.request_id for e in owed] == ["b1#1", "b2#1"]
    model = quiet_model()
    for effect in owed:
        event = await resolve_effect(effect, snapshot, model)
        assert event is not None
        snapshot, _ = transition(full_machine, snapshot, event)
    assert snapshot.status == "done"
    assert full_machine.get_persisted_snapshot(snapshot) == replay(full_machine, reference).snapshot.to_persisted()
    assert [c.request_id for c in model.calls] == ["b1#1", "b2#1"]


async def test_a_plan_resurfaces_each_frontier_until_its_step_budget_ends() -> None:
    model = ScriptedModel(decisions=["ADD", "SUB", "ADD", "agent.plan.done"])
    entries: list[dict[str, Any]] = [init_entry(plan_machine, id="p0")]
    snapshot, actions = initial_transition(plan_machine)
    seen_applied = []
    for _ in range(10):
        effects = [e for e in get_agent_effects(plan_machine, snapshot, actions, history=entries) if e.kind == "plan"]
        if not effects:
            break
        (plan,) = effects
        assert plan.request_id == "planner#1"
        seen_applied.append(len(plan.request.applied))
        outcome = await perform_effect(plan, model, can_take=snapshot.can)
        snapshot, actions = transition(plan_machine, snapshot, outcome.event)
        entries.append(create_replay_entry(plan_machine, outcome.event, len(entries), snapshot_after=snapshot,
                                           causation_id=outcome.causation_id, id=f"p{len(entries)}"))
    assert seen_applied == [0, 1, 2, 3]  # the applied trail is derived from the journal
    assert snapshot.status == "done" and snapshot.output["count"] == 1
    assert snapshot.output["result"] == {"steps": [{"type": "ADD"}, {"type": "SUB"}, {"type": "ADD"}], "stopped": "max-steps"}
