"""The provider-neutral pieces: prompt shapes, idempotency keys, tool names and their way back, option fitting,
and credential scrubbing. Requests are built by the real step path (`get_agent_effects`) where it matters."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from agent_explorer import AgentError
from agent_explorer.providers import idempotency_key, tool_name_for
from agent_explorer.providers.common import (
    event_tools,
    fit_to,
    normalize_prompt,
    provider_error,
    scrub,
    secrets_of,
)
from agent_explorer.runtime import AgentRequest

from .machines import TRIAGE_INPUT, triage_agent

LEGAL = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def request(**fields: Any) -> AgentRequest:
    base: dict[str, Any] = {"kind": "text", "request_id": "draft#1", "site": "draft", "occurrence": 1}
    return AgentRequest(**{**base, **fields})


@pytest.mark.parametrize(
    ("prompt", "system", "messages"),
    [
        ("Hello", None, [{"role": "user", "content": "Hello"}]),
        ({"system": "Be brief.", "prompt": "Hello"}, "Be brief.", [{"role": "user", "content": "Hello"}]),
        (
            {"system": "Be brief.", "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yes?"}]},
            "Be brief.",
            [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yes?"}],
        ),
        ([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}], None,
         [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]),
    ],
)
def test_prompt_shapes_map_to_system_and_messages(prompt: Any, system: str | None, messages: list[Any]) -> None:
    mapped = normalize_prompt(request(prompt=prompt))
    assert (mapped.system, mapped.messages) == (system, messages)


@pytest.mark.parametrize(
    ("prompt", "says"),
    [
        (None, "is NoneType"),
        ({"system": "S"}, "neither 'messages' nor a string 'prompt'"),
        ([{"role": "robot", "content": "x"}], "role 'robot'"),
        ([{"role": "user"}], "no 'content'"),
        ({"system": 3, "prompt": "x"}, "system of type int"),
    ],
)
def test_a_bad_prompt_is_a_clear_error_naming_the_request(prompt: Any, says: str) -> None:
    with pytest.raises(AgentError) as caught:
        normalize_prompt(request(prompt=prompt))
    assert caught.value.code == "invalid-prompt"
    assert "draft#1" in caught.value.message and says in caught.value.message


def test_idempotency_keys_are_the_call_key_then_derived_per_step_and_attempt() -> None:
    decision = request(kind="decision", request_id="choose#1", call_key="exec:choose#1", events=("A",))
    assert idempotency_key(decision) == "exec:choose#1"
    refused = ({"event": {"type": "A"}, "reason": "guard"},)
    assert idempotency_key(dataclasses.replace(decision, rejected=refused)) == "exec:choose#1/attempt-2"
    assert idempotency_key(dataclasses.replace(decision, rejected=refused * 2)) == "exec:choose#1/attempt-3"
    plan = request(kind="plan", request_id="tag#1", call_key="exec:tag#1", applied=({"type": "A"},))
    assert idempotency_key(plan) == "exec:tag#1/step-2"
    assert idempotency_key(dataclasses.replace(plan, applied=())) == "exec:tag#1"
    assert idempotency_key(request(call_key=None)) == "draft#1"  # a journal with no execution id


def test_tool_names_are_legal_and_map_back_to_the_event_types() -> None:
    types = ("agent.plan.done", "order.refund", "order_refund", "ADD TAG/urgent", "x" * 80, "APPROVE")
    tools = event_tools(request(kind="decision", events=types))
    names = [t["name"] for t in tools.tools]
    assert all(LEGAL.match(n) for n in names), names
    assert len(set(names)) == len(names)  # "order.refund" and "order_refund" do not collide
    assert names[0] == "agent_plan_done" and names[-1] == "APPROVE"
    assert [tools.event_for(n, "{}")["type"] for n in names] == list(types)
    assert tool_name_for("agent.plan.done") == "agent_plan_done"


def test_a_tool_call_becomes_the_event_its_name_and_arguments_say() -> None:
    tools = event_tools(request(kind="decision", events=("REFUND",)))
    assert tools.event_for("REFUND", '{"amountCents": 5, "type": "FORGED"}') == {"amountCents": 5, "type": "REFUND"}
    assert tools.event_for("REFUND", {"amountCents": 5}) == {"amountCents": 5, "type": "REFUND"}
    assert tools.event_for("UNKNOWN", None) == {"type": "UNKNOWN"}  # refused later as not legal
    # Arguments that are not an object make a choice no machine has: refused, and asked again.
    assert tools.event_for("REFUND", "{broken") == {"type": "(bad arguments for REFUND)"}
    assert tools.event_for("REFUND", "[1]") == {"type": "(bad arguments for REFUND)"}


async def test_a_decision_request_from_the_step_path_carries_the_schemas_its_tools_describe() -> None:
    from agent_explorer import run_agent
    from agent_explorer.runtime import ScriptedModel

    model = ScriptedModel(["summary", "reply"], decisions=[{"type": "ESCALATE"}, "agent.plan.done"])
    result = await run_agent(triage_agent, input=TRIAGE_INPUT, executors=model)
    assert result.status == "done", (result.cause, result.error)
    decision = next(r for r in model.calls if r.kind == "decision")
    tools = event_tools(decision)
    refund = next(t for t in tools.tools if t["name"] == "REFUND")
    assert refund["description"] == "Refund part of the customer's payment."
    assert refund["parameters"]["required"] == ["amountCents", "reason"]
    assert "type" not in refund["parameters"]["properties"]
    escalate = next(t for t in tools.tools if t["name"] == "ESCALATE")
    assert escalate["parameters"] == {"type": "object", "properties": {}}  # no schema registered


def test_options_the_sdk_method_does_not_name_go_in_extra_body() -> None:
    def create(*, model: str, messages: Any, temperature: float = 1.0, extra_body: Any = None, extra_headers: Any = None) -> None:
        return None

    fitted = fit_to(create, {"model": "m", "messages": [], "temperature": 0.2, "num_ctx": 4096, "extra_body": {"a": 1}})
    assert fitted == {"model": "m", "messages": [], "temperature": 0.2, "extra_body": {"a": 1, "num_ctx": 4096}}


def test_credentials_are_scrubbed_from_a_failure_and_its_cause() -> None:
    import openai

    key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123"
    client = openai.AsyncOpenAI(api_key=key, base_url="http://127.0.0.1:9/v1")
    secrets = secrets_of(client)
    assert key in secrets
    assert scrub(f"bad key {key}; Authorization: Bearer {key}", secrets) == "bad key [redacted]; Authorization: [redacted]"
    assert scrub("Bearer tok_0123456789abcdef and api_key=abcdefghij12", []) == "Bearer [redacted] and api_key=[redacted]"
    try:
        try:
            raise ConnectionError(f"proxy refused Bearer {key}")
        except ConnectionError as inner:
            raise RuntimeError(f"call failed with {key}") from inner
    except RuntimeError as error:
        failure = provider_error("OpenAI", request(), error, secrets)
    from agent_explorer.eventlog.entries import normalize_error

    normalized = normalize_error(failure)
    assert key not in str(normalized)
    assert normalized["name"] == "ProviderError"
    assert normalized["cause"]["name"] == "RuntimeError"
    assert normalized["cause"]["cause"] == {"name": "ConnectionError", "message": "proxy refused [redacted]"}


def test_executors_refuse_what_is_not_a_client() -> None:
    from agent_explorer.providers import AnthropicExecutors, OpenAIExecutors

    with pytest.raises(AgentError, match="AsyncOpenAI client"):
        OpenAIExecutors(object(), "m")
    with pytest.raises(AgentError, match="AsyncAnthropic client"):
        AnthropicExecutors(object(), "m")
    with pytest.raises(AgentError, match="model id"):
        OpenAIExecutors(object(), "")
