"""run_agent's less travelled paths: snapshot as cache, the version bridge, streaming, timers
racing a task, host misconfiguration, outputs JSON cannot hold."""

from __future__ import annotations

from typing import Any

import pytest

from agent_explorer.errors import AgentError, AgentSnapshotDivergedError
from agent_explorer.eventlog.replay import replay
from agent_explorer.eventlog.snapshot_cache import persist_snapshot
from agent_explorer.runtime import ScriptedModel, run_agent

from .conftest import counting_ids
from .machines import (
    USAGE,
    approval_machine,
    approval_machine_v2,
    odd_task_machine,
    race_machine,
)


async def _idle_log() -> Any:
    return await run_agent(approval_machine, input={"q": "hi"}, executors=ScriptedModel(["r"]), ids=counting_ids())


async def test_a_cached_snapshot_that_fits_the_log_resumes_it() -> None:
    idle = await _idle_log()
    cached = persist_snapshot(approval_machine, idle.snapshot, idle.events, "thread-1")
    result = await run_agent(approval_machine, events=idle.events, snapshot=cached, log_id="thread-1",
                             event={"type": "APPROVE", "note": "n"})
    assert result.status == "done" and result.output == {"text": "r", "note": "n"}
    assert result.events[: len(idle.events)] == idle.events


async def test_a_cached_snapshot_that_disagrees_with_the_log_is_refused() -> None:
    idle = await _idle_log()
    cached = persist_snapshot(approval_machine, idle.snapshot, idle.events, "thread-1")
    cached["context"] = {**cached["context"], "text": "tampered"}
    with pytest.raises(AgentSnapshotDivergedError) as caught:
        await run_agent(approval_machine, events=idle.events, snapshot=cached, log_id="thread-1")
    assert caught.value.code == "snapshot-diverged"


async def test_the_version_bridge_starts_a_new_segment_from_the_migrated_snapshot() -> None:
    idle = await _idle_log()
    persisted = approval_machine.get_persisted_snapshot(idle.snapshot)
    chunks: list[str] = []
    bridged = await run_agent(approval_machine_v2, events=idle.events, snapshot=persisted,
                              event={"type": "REJECT"}, executors=ScriptedModel(["second, streamed"], usage=USAGE),
                              on_chunk=chunks.append)
    init = bridged.events[0]
    assert init["event"]["type"] == "@agent.init" and init["machineVersion"] == "2"
    assert init["event"]["snapshot"]["context"]["notes"] == []
    assert init["metadata"]["migratedFrom"]["version"] == "1"
    assert init["metadata"]["machineRef"] == "runtime.machines:approval_machine_v2"
    # The REJECT re-drafted through the streaming executor: chunks were live, only the text journaled.
    assert "".join(chunks) == "second, streamed" and len(chunks) > 1
    done = next(e for e in bridged.events if e["event"]["type"] == "xstate.done.actor.draft")
    assert done["event"]["output"] == {"text": "second, streamed"}
    assert bridged.snapshot.context["text"] == "second, streamed"
    replay(approval_machine_v2, bridged.events, verify="strict")


async def test_old_events_of_another_version_without_a_snapshot_are_refused() -> None:
    from agent_explorer.errors import AgentMachineVersionMismatchError

    idle = await _idle_log()
    with pytest.raises(AgentMachineVersionMismatchError):
        await run_agent(approval_machine_v2, events=idle.events)


async def test_a_missing_executor_settles_error_and_journals_no_failure() -> None:
    result = await run_agent(approval_machine, input={"q": "hi"})
    assert result.status == "error" and result.cause == "missing-executor"
    assert [e["event"]["type"] for e in result.events] == ["@agent.init"]


async def test_a_task_output_json_cannot_hold_fails_the_task_not_the_run() -> None:
    result = await run_agent(odd_task_machine)
    assert result.status == "done" and result.snapshot.value == "failed"
    error = result.events[1]["event"]
    assert error["type"] == "xstate.error.actor.odd" and error["error"]["name"] == "NonSerializableAgentEventError"


async def test_a_timer_that_wins_the_race_cancels_the_task_and_nothing_late_is_journaled() -> None:
    result = await run_agent(race_machine, timers="run")
    assert result.status == "done" and result.snapshot.value == "timedOut"
    assert [e["event"]["type"] for e in result.events] == ["@agent.init", "xstate.after.5.race.waiting"]


async def test_a_decision_without_an_acceptable_choice_is_the_actors_error() -> None:
    from .machines import full_machine

    result = await run_agent(full_machine, input={"q": "tides"}, executors=ScriptedModel(
        {"Draft about facts about tides": "d"}, decisions={"Judge: d": ["REVISE"]}))
    assert result.status == "error" and result.cause == "machine"  # no onError: the machine errors
    last = result.events[-1]["event"]
    assert last["type"] == "xstate.error.actor.judge" and "decision-rejected" not in last["error"]["message"]
    assert "no acceptable choice" in last["error"]["message"]


async def test_the_executor_protocol_can_be_a_dict_of_plain_functions() -> None:
    calls: list[str] = []

    def generate_text(request: Any) -> dict[str, Any]:
        calls.append(request.call_key)
        return {"text": f"echo {request.prompt}", "usage": {"totalTokens": 2}, "model": "echo-1"}

    result = await run_agent(approval_machine, input={"q": "x"}, executors={"generate_text": generate_text})
    assert result.snapshot.context["text"] == "echo Reply to x"
    usage = result.events[-1]["event"]
    assert usage == {"type": "@agent.usage", "requestId": "draft#1", "model": "echo-1", "usage": {"totalTokens": 2}}
    with pytest.raises(AgentError):
        await run_agent(approval_machine, timers="never")  # type: ignore[arg-type]


async def test_an_initial_state_json_cannot_hold_produces_no_log_at_all(store: Any) -> None:
    from .machines import unjsonable_machine

    seen: list[Any] = []
    model = ScriptedModel(["hi"])
    result = await run_agent(unjsonable_machine, store=store, thread_id="t", executors=model, on_event=seen.append)
    assert result.status == "done"  # the run itself still runs
    assert result.events == [] and seen == [] and await store.length("t") == 0
    assert [c.request_id for c in model.calls] == ["draft#1"]


async def test_on_event_fires_at_acceptance_with_a_store_too(store: Any) -> None:
    seen: list[Any] = []
    result = await run_agent(approval_machine, input={"q": "x"}, store=store, thread_id="t",
                             executors=ScriptedModel(["r"], usage=USAGE), on_event=seen.append)
    assert seen == result.events == await store.read("t")


async def test_a_models_choice_goes_through_the_event_schema_like_wire_input() -> None:
    from .machines import review_machine

    model = ScriptedModel(decisions=[{"type": "APPROVE", "score": 99}, {"type": "APPROVE", "note": " fine "}])
    result = await run_agent(review_machine, executors=model)
    assert result.status == "done" and result.output == {"score": 1}
    chosen = result.events[1]
    assert chosen["event"] == {"type": "APPROVE", "note": "fine", "score": 1}  # defaults filled, validators run
    assert chosen["causationId"] == "reviewer#1"
    # The first choice was refused for its payload, and the retry was told why.
    assert model.calls[0].events == ("APPROVE", "REJECT")
    assert "payload is invalid" in model.calls[1].rejected[0]["reason"]
    assert "score" in model.calls[1].rejected[0]["reason"]


async def test_a_task_that_wins_the_race_cancels_the_running_timer() -> None:
    import time

    started = time.perf_counter()
    result = await run_agent(race_machine, timers="run", time_scale=200.0)  # the 5 ms timer becomes 1 s
    assert result.status == "done" and result.snapshot.value == "finished"
    assert time.perf_counter() - started < 0.8  # settled on the task, not after the timer
    assert [e["event"]["type"] for e in result.events] == ["@agent.init", "xstate.done.actor.slow"]
