"""run_agent against real stores (docs/semantics/runtime.md "Write-ahead journaling", "Resume from the log")."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_explorer.errors import AgentError, AgentEventLogConflictError
from agent_explorer.eventlog.replay import replay
from agent_explorer.eventlog.usage import get_usage_from_events
from agent_explorer.runtime import ScriptedModel, parse_agent_event, run_agent

from .conftest import counting_ids, ticking_clock
from .machines import USAGE, approval_machine, plan_machine, timer_machine


def _model(*texts: str) -> ScriptedModel:
    return ScriptedModel(list(texts), usage=USAGE)


async def test_a_store_requires_a_thread_id(store: Any) -> None:
    with pytest.raises(AgentError) as caught:
        await run_agent(approval_machine, input={"q": "x"}, store=store, executors=_model("a"))
    assert caught.value.code == "missing-thread-id"


async def test_persist_then_resume_with_an_event_off_the_wire(store: Any) -> None:
    model = _model("first reply")
    first = await run_agent(approval_machine, input={"q": "hi"}, store=store, thread_id="t", executors=model)
    assert first.status == "idle" and first.snapshot.value == "review"
    types = [e["event"]["type"] for e in first.events]
    assert types == ["@agent.init", "xstate.done.actor.draft", "@agent.usage"]
    assert await store.read("t") == first.events
    assert first.events[0]["metadata"]["machineRef"] == "runtime.machines:approval_machine"

    event = parse_agent_event(approval_machine, {"type": "APPROVE", "note": " ok "})
    second = await run_agent(approval_machine, store=store, thread_id="t", event=event, executors=model)
    assert second.status == "done"
    assert second.output == {"text": "first reply", "note": "ok"}
    assert second.ignored is None
    # The resumed result extends the same log; nothing recorded ran again.
    assert second.events[:3] == first.events and len(second.events) == 4
    assert [c.request_id for c in model.calls] == ["draft#1"]
    replay(approval_machine, second.events, verify="strict")
    assert get_usage_from_events(second.events)["totalTokens"] == 15


async def test_an_event_the_state_does_not_handle_is_ignored_and_journaled(store: Any) -> None:
    await run_agent(approval_machine, input={"q": "hi"}, store=store, thread_id="t", executors=_model("r"))
    result = await run_agent(approval_machine, store=store, thread_id="t", event={"type": "NOPE"}, executors=_model())
    assert result.status == "idle" and result.ignored == {"type": "NOPE"}
    assert result.events[-1]["event"] == {"type": "NOPE"}
    assert await store.length("t") == 4
    assert replay(approval_machine, result.events, verify="strict").snapshot.value == "review"


async def test_a_final_log_settles_at_once_with_the_recorded_output(store: Any) -> None:
    model = _model("r")
    await run_agent(approval_machine, input={"q": "hi"}, store=store, thread_id="t", executors=model)
    await run_agent(approval_machine, store=store, thread_id="t", event={"type": "APPROVE"}, executors=model)
    again = await run_agent(approval_machine, store=store, thread_id="t", event={"type": "APPROVE"}, executors=model)
    assert again.status == "done" and again.output == {"text": "r", "note": None}  # run_agent adds no validation
    assert again.ignored == {"type": "APPROVE"}
    assert await store.length("t") == 4 and len(model.calls) == 1


async def test_explicit_events_must_be_the_threads_log(store: Any) -> None:
    first = await run_agent(approval_machine, input={"q": "hi"}, store=store, thread_id="t", executors=_model("r"))
    with pytest.raises(AgentEventLogConflictError) as caught:
        await run_agent(approval_machine, store=store, thread_id="t", events=first.events[:2], executors=_model())
    assert (caught.value.expected_index, caught.value.actual_length) == (2, 3)
    tampered = [dict(e) for e in first.events]
    tampered[1] = {**tampered[1], "id": "someone-else"}
    with pytest.raises(AgentError) as caught2:
        await run_agent(approval_machine, store=store, thread_id="t", events=tampered, executors=_model())
    assert caught2.value.code == "event-log-conflict" and caught2.value.index == 1
    same = await run_agent(approval_machine, store=store, thread_id="t", events=first.events, event={"type": "APPROVE"})
    assert same.status == "done"


async def test_an_empty_thread_starts_from_input_and_metadata_is_carried(store: Any) -> None:
    result = await run_agent(
        approval_machine, input={"q": "x"}, store=store, thread_id="fresh", executors=_model("r"),
        metadata={"executionId": "exec-1", "tenant": "acme"}, machine_ref="pkg.mod:machine",
    )
    assert result.events[0]["metadata"] == {"executionId": "exec-1", "tenant": "acme", "machineRef": "pkg.mod:machine"}
    assert result.events[0]["event"] == {"type": "@agent.init", "input": {"q": "x"}}


async def test_a_request_in_flight_when_the_log_ended_re_executes_with_a_stable_call_key(store: Any) -> None:
    full = await run_agent(approval_machine, input={"q": "hi"}, executors=_model("r"), ids=counting_ids())
    # The log ends right after init: the draft request was in flight and has no completion.
    await store.append(thread_id="t", expected_index=0, entries=full.events[:1])
    keys = []
    for attempt in range(2):
        model = _model("r")
        # Reuse the thread prefix each time: fork-like copies so both attempts see the same log.
        thread = f"t{attempt}"
        await store.append(thread_id=thread, expected_index=0, entries=full.events[:1])
        result = await run_agent(approval_machine, store=store, thread_id=thread, executors=model)
        assert result.status == "idle" and len(model.calls) == 1
        keys.append(model.calls[0].call_key)
    assert keys[0] == keys[1] == f"{full.events[0]['metadata']['executionId']}:draft#1"


async def test_on_event_observes_every_entry_in_order_without_a_store() -> None:
    seen: list[dict[str, Any]] = []
    result = await run_agent(approval_machine, input={"q": "hi"}, executors=_model("r"), on_event=seen.append)
    assert seen == result.events and seen[0]["event"]["type"] == "@agent.init"


async def test_injected_clock_and_ids_make_logs_byte_identical() -> None:
    async def once() -> list[dict[str, Any]]:
        result = await run_agent(
            approval_machine, input={"q": "hi"}, executors=_model("r"), now=ticking_clock(), ids=counting_ids()
        )
        return result.events

    assert await once() == await once()


async def test_resuming_from_a_snapshot_without_a_log_starts_a_self_contained_segment(store: Any) -> None:
    first = await run_agent(approval_machine, input={"q": "hi"}, executors=_model("r"))
    persisted = approval_machine.get_persisted_snapshot(first.snapshot)
    resumed = await run_agent(approval_machine, snapshot=persisted, store=store, thread_id="s", event={"type": "APPROVE"})
    assert resumed.status == "done"
    assert resumed.events[0]["event"] == {"type": "@agent.init", "snapshot": persisted}
    assert replay(approval_machine, resumed.events, verify="strict").snapshot.output == resumed.output


async def test_model_failure_is_journaled_as_the_actors_error_completion(store: Any) -> None:
    result = await run_agent(approval_machine, input={"q": "hi"}, store=store, thread_id="t", executors=ScriptedModel([]))
    assert result.status == "done" and result.snapshot.value == "failed"
    error_entry = result.events[1]
    assert error_entry["event"]["type"] == "xstate.error.actor.draft"
    assert error_entry["event"]["error"]["name"] == "AgentError"
    assert error_entry["causationId"] == "draft#1"


async def test_drain_never_raises_and_the_result_waited_for_its_writes(store: Any) -> None:
    result = await run_agent(approval_machine, input={"q": "hi"}, store=store, thread_id="t", executors=_model("r"))
    await result.drain()
    assert await store.length("t") == len(result.events)


async def test_timers_are_owed_by_default_and_run_when_asked() -> None:
    owed = await run_agent(timer_machine)
    assert owed.status == "idle" and [e.kind for e in owed.owed] == ["delay"]
    ran = await run_agent(timer_machine, timers="run", time_scale=0.001)
    assert ran.status == "done" and ran.snapshot.value == "expired"
    assert ran.events[-1]["event"] == {"type": "xstate.after.500.timer.waiting"}
    # The host journals the firing explicitly on resume: the delay's event is the entry.
    fired = await run_agent(timer_machine, events=owed.events, event=owed.owed[0].event)
    assert fired.status == "done" and fired.snapshot.value == "expired"


async def test_a_cancelled_timer_never_fires() -> None:
    result = await run_agent(timer_machine, event=None, timers="run", time_scale=0.01, events=None)
    assert result.snapshot.value == "expired"
    go = await run_agent(timer_machine, timers="owed")
    moved = await run_agent(timer_machine, events=go.events, event={"type": "GO"}, timers="run", time_scale=0.001)
    assert moved.status == "done" and moved.snapshot.value == "ticked"
    assert [e["event"]["type"] for e in moved.events] == ["@agent.init", "GO", "TICK"]


@pytest.mark.parametrize(
    ("decisions", "stopped", "count"),
    [
        (["ADD", "ADD", "agent.plan.done"], "done", 2),
        (["ADD", "SUB", "ADD", "ADD"], "max-steps", 1),
        (["ADD", "HALT"], "stop-on", 1),
    ],
    ids=["done-move", "max-steps", "stop-on"],
)
async def test_plans_apply_decisions_until_they_stop(decisions: list[str], stopped: str, count: int) -> None:
    model = ScriptedModel(decisions=decisions)
    result = await run_agent(plan_machine, executors=model)
    assert result.status == "done"
    assert result.output["count"] == count
    assert result.output["result"]["stopped"] == stopped
    steps = [e["type"] for e in result.output["result"]["steps"]]
    assert steps == [d for d in decisions if d != "agent.plan.done"][: len(steps)]
    # Each step is journaled as the bare machine event, caused by the plan's request.
    journaled = [(e["event"]["type"], e.get("causationId")) for e in result.events[1:]]
    assert all(cause == "planner#1" for _, cause in journaled)
    assert journaled[-1][0] == "xstate.done.actor.planner"
    replay(plan_machine, result.events, verify="strict")


async def test_concurrent_runs_share_nothing() -> None:
    results = await asyncio.gather(*(run_agent(approval_machine, input={"q": str(i)}, executors=_model("r")) for i in range(5)))
    assert all(r.status == "idle" for r in results)


async def test_a_resume_refuses_a_log_this_machine_no_longer_derives() -> None:
    from agent_explorer.errors import AgentReplayDivergenceError

    first = await run_agent(approval_machine, input={"q": "hi"}, executors=_model("r"))
    tampered = [dict(e) for e in first.events]
    tampered[1] = {**tampered[1], "event": {**tampered[1]["event"], "output": {"text": "edited"}}}
    with pytest.raises(AgentReplayDivergenceError) as caught:
        await run_agent(approval_machine, events=tampered, event={"type": "APPROVE"})
    assert caught.value.index == 1 and caught.value.kind == "state"
