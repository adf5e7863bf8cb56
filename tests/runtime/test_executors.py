"""ScriptedModel and resolve_decision: deterministic answers, usage, streaming, retries."""

from __future__ import annotations

import pytest

from agent_explorer.errors import AgentError
from agent_explorer.runtime import ScriptedModel, resolve_decision
from agent_explorer.runtime.executors import AgentRequest, collect_stream


def _request(prompt: object, kind: str = "text", events: tuple[str, ...] = (), rid: str = "s#1") -> AgentRequest:
    return AgentRequest(kind=kind, request_id=rid, site=rid.split("#")[0], occurrence=1, prompt=prompt, events=events)


async def test_answers_in_order_and_records_calls() -> None:
    model = ScriptedModel(["one", "two"], usage={"inputTokens": 1, "outputTokens": 2, "totalTokens": 3})
    first = await model.generate_text(_request("a", rid="a#1"))
    second = await model.generate_text(_request("b", rid="b#1"))
    assert (first["text"], second["text"]) == ("one", "two")
    assert first["usage"] == {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3}
    assert [c.request_id for c in model.calls] == ["a#1", "b#1"]
    with pytest.raises(AgentError) as caught:
        await model.generate_text(_request("c"))
    assert caught.value.code == "scripted-model-exhausted"


async def test_answers_by_prompt_including_message_lists() -> None:
    model = ScriptedModel({"hello": ["first", "second"], "bye": "ciao"})
    assert (await model.generate_text(_request([{"role": "user", "content": "hello"}])))["text"] == "first"
    assert (await model.generate_text(_request("bye")))["text"] == "ciao"
    assert (await model.generate_text(_request("hello")))["text"] == "second"
    # The last scripted answer for a prompt repeats, so a re-execution stays deterministic.
    assert (await model.generate_text(_request("hello")))["text"] == "second"
    with pytest.raises(AgentError, match="no response scripted for prompt 'other'"):
        await model.generate_text(_request("other"))


async def test_streams_chunks_live_and_joins_the_final_text() -> None:
    model = ScriptedModel(["streamed reply"], usage={"totalTokens": 7}, chunk_size=3)
    chunks: list[str] = []
    result = await collect_stream(model.stream_text(_request("p")), chunks.append)
    assert result.text == "streamed reply"
    assert chunks == ["str", "eam", "ed ", "rep", "ly"]
    assert result.usage == {"totalTokens": 7}


async def test_resolve_decision_retries_guard_rejected_and_illegal_choices() -> None:
    model = ScriptedModel(decisions=["FLY", "REVISE", {"type": "ACCEPT", "why": "good"}])
    request = _request("judge", kind="decision", events=("ACCEPT", "REVISE"), rid="judge#1")
    event = await resolve_decision(request, model.decide, can_take=lambda e: e["type"] != "REVISE")
    assert event == {"type": "ACCEPT", "why": "good"}
    # Each retry saw what was refused and why.
    assert [len(c.rejected) for c in model.calls] == [0, 1, 2]
    assert "legal events" in model.calls[2].rejected[0]["reason"]
    assert "guard" in model.calls[2].rejected[1]["reason"]


async def test_resolve_decision_gives_up_with_a_stable_code() -> None:
    model = ScriptedModel(decisions=["NO", "NO", "NO"])
    request = _request("judge", kind="decision", events=("YES",), rid="judge#1")
    with pytest.raises(AgentError) as caught:
        await resolve_decision(request, model.decide)
    assert caught.value.code == "decision-rejected"
    assert caught.value.request_id == "judge#1"


async def test_decide_may_be_a_plain_function() -> None:
    request = _request("x", kind="decision", events=("GO",))
    assert await resolve_decision(request, lambda r: "GO") == {"type": "GO"}


async def test_a_plan_with_no_legal_candidate_completes_without_asking_the_model() -> None:
    from agent_explorer.runtime.plans import plan_step

    model = ScriptedModel(decisions=["ADD"])
    request = AgentRequest(kind="plan", request_id="p#1", site="p", occurrence=1, events=("ADD", "SUB"),
                           max_steps=5, applied=({"type": "ADD"},))
    step = await plan_step(request, model.decide, can_take=lambda event: False)
    assert step.event is None and step.completed == {"steps": [{"type": "ADD"}], "stopped": "no-legal-events"}
    assert model.calls == []
    step = await plan_step(request, model.decide)
    assert step.event == {"type": "ADD"} and step.completed is None
    assert model.calls[0].events == ("ADD", "SUB", "agent.plan.done")  # the reserved done move is offered
