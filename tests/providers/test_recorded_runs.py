"""Runs recorded through the real OpenAI and Anthropic SDKs against a real HTTP server speaking each API's wire
format: the journal replays and verifies, usage is what the server sent, idempotency keys survive a crash-cut
resume, the SDK's retries stay inside one call, and a hard failure settles the run the way `onError` says."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from agent_explorer import run_agent, verify_log
from agent_explorer.eventlog.replay import replay
from agent_explorer.samples.support import support_agent

from .conftest import Provider, assert_no_secret, usage_entries
from .machines import SUMMARY_MODEL, SUPPORT_INPUT, TRIAGE_INPUT, triage_agent
from .server import ProviderServer, fixture, json_reply, raw_reply

TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

SUPPORT_USAGE = {
    "openai": [
        ("classify#1", "gpt-test-small-2026-01-01", {
            "inputTokens": 57, "outputTokens": 2, "totalTokens": 59, "cachedInputTokens": 32, "inputAudioTokens": 0,
            "reasoningTokens": 0, "outputAudioTokens": 0, "acceptedPredictionTokens": 0, "rejectedPredictionTokens": 0,
        }),
        ("draft#1", "gpt-test-large-2026-01-01", {
            "inputTokens": 96, "outputTokens": 21, "totalTokens": 117, "cachedInputTokens": 0, "reasoningTokens": 8,
        }),
        ("chooseAction#1", "gpt-test-large-2026-01-01", {"inputTokens": 140, "outputTokens": 9, "totalTokens": 149}),
        ("finalReply#1", "gpt-test-large-2026-01-01", {
            "inputTokens": 88, "outputTokens": 12, "totalTokens": 100, "cachedInputTokens": 64,
        }),
    ],
    "anthropic": [
        ("classify#1", "claude-test-haiku-20260101", {
            "inputTokens": 61, "outputTokens": 3, "totalTokens": 64, "cachedInputTokens": 40, "cacheCreationInputTokens": 0,
        }),
        ("draft#1", "claude-test-sonnet-20260101", {
            "inputTokens": 101, "outputTokens": 24, "totalTokens": 125, "cachedInputTokens": 0,
            "cacheCreationInputTokens": 512,
        }),
        ("chooseAction#1", "claude-test-sonnet-20260101", {
            "inputTokens": 402, "outputTokens": 37, "totalTokens": 439, "cachedInputTokens": 512,
            "cacheCreationInputTokens": 0,
        }),
        ("finalReply#1", "claude-test-sonnet-20260101", {"inputTokens": 90, "outputTokens": 13, "totalTokens": 103}),
    ],
}

TRIAGE_USAGE = {
    "openai": [
        ("summarize#1", "gpt-test-summary-2026-01-01", {"inputTokens": 44, "outputTokens": 8, "totalTokens": 52}),
        ("reply#1", "gpt-test-mini-2026-01-01", {
            "inputTokens": 31, "outputTokens": 7, "totalTokens": 38, "cachedInputTokens": 16, "reasoningTokens": 0,
        }),
        ("choose#1", "gpt-test-mini-2026-01-01", {"inputTokens": 120, "outputTokens": 18, "totalTokens": 138}),
        ("choose#1", "gpt-test-mini-2026-01-01", {"inputTokens": 161, "outputTokens": 18, "totalTokens": 179}),
        ("choose#1", "gpt-test-mini-2026-01-01", {
            "inputTokens": 203, "outputTokens": 18, "totalTokens": 221, "cachedInputTokens": 128,
        }),
        ("tag#1", "gpt-test-mini-2026-01-01", {"inputTokens": 70, "outputTokens": 6, "totalTokens": 76}),
        ("tag#1", "gpt-test-mini-2026-01-01", {"inputTokens": 92, "outputTokens": 4, "totalTokens": 96}),
    ],
    "anthropic": [
        ("summarize#1", "claude-test-summary-20260101", {"inputTokens": 47, "outputTokens": 9, "totalTokens": 56}),
        # message_start said 1 output token; message_delta's cumulative 11 replaces it.
        ("reply#1", "claude-test-haiku-20260101", {
            "inputTokens": 33, "outputTokens": 11, "totalTokens": 44, "cachedInputTokens": 24,
            "cacheCreationInputTokens": 0,
        }),
        ("choose#1", "claude-test-haiku-20260101", {"inputTokens": 150, "outputTokens": 30, "totalTokens": 180}),
        ("choose#1", "claude-test-haiku-20260101", {"inputTokens": 190, "outputTokens": 31, "totalTokens": 221}),
        ("choose#1", "claude-test-haiku-20260101", {
            "inputTokens": 230, "outputTokens": 31, "totalTokens": 261, "cachedInputTokens": 150,
            "cacheCreationInputTokens": 0, "webSearchRequests": 1, "webFetchRequests": 0,
        }),
        ("tag#1", "claude-test-haiku-20260101", {"inputTokens": 75, "outputTokens": 7, "totalTokens": 82}),
        ("tag#1", "claude-test-haiku-20260101", {"inputTokens": 99, "outputTokens": 5, "totalTokens": 104}),
    ],
}


def script_support(server: ProviderServer, provider: Provider) -> None:
    provider.on(server, "classify", "Classify this support ticket", provider.json("support_classify.json"))
    provider.on(server, "draft", "Draft a reply to", provider.json("support_draft.json"))
    provider.on(server, "choose", "Choose the next step", provider.json("support_choose.json"))
    provider.on(server, "final", "Write the final reply", provider.json("support_final.json"))


def script_triage(server: ProviderServer, provider: Provider, *, summary: list[Any] | None = None) -> None:
    provider.on(server, "summary", "Summarise:", *(summary or [provider.json("triage_summary.json")]))
    provider.on(server, "reply", "Write a reply about", provider.sse("triage_reply.sse"))
    provider.on(
        server, "choose", "Decide on the ticket",
        provider.json("triage_choose_bad_schema.json"),
        provider.json("triage_choose_over_limit.json"),
        provider.json("triage_choose_ok.json"),
    )
    provider.on(server, "tag-first", "Moves applied so far: none", provider.json("triage_tag.json"))
    provider.on(server, "tag-next", "Tag the ticket", provider.json("triage_tag_done.json"))


def call_key(entries: list[dict[str, Any]], request_id: str) -> str:
    return f"{entries[0]['metadata']['executionId']}:{request_id}"


def keys_for(server: ProviderServer, needle: str) -> list[str]:
    return [r.headers["idempotency-key"] for r in server.requests_for(needle)]


# -- a full support run ------------------------------------------------------------------------------------


async def test_a_support_run_recorded_through_the_provider_replays_and_verifies(
    provider: Provider, server: ProviderServer, sqlite: Any
) -> None:
    script_support(server, provider)
    executors = provider.executors(server)
    first = await run_agent(support_agent, input=SUPPORT_INPUT, store=sqlite, thread_id="t", executors=executors)
    assert first.status == "idle", (first.cause, first.error)
    assert first.snapshot.value == "awaitingApproval"  # the model chose OFFER_REFUND through its tool
    approved = await run_agent(
        support_agent, store=sqlite, thread_id="t", executors=executors,
        event={"type": "APPROVE", "approver": "dana"},
    )
    assert approved.status == "done", (approved.cause, approved.error)
    assert approved.output["resolution"] == "resolved"
    assert approved.output["refund"]["refundId"] == "RF-A-5531"

    entries = await sqlite.read("t")
    report = verify_log(support_agent, entries, strict=True)
    assert report.ok, report
    assert replay(support_agent, entries, verify="strict").snapshot.output == approved.output

    done = {e["event"]["type"]: e["event"].get("output") for e in entries}
    large = "gpt-test-large-2026-01-01" if provider.name == "openai" else "claude-test-sonnet-20260101"
    expected_draft = (
        "Hi Ana, sorry the backpack arrived torn. We can refund the 89.00 EUR." if provider.name == "openai"
        else "Hi Ana, I'm sorry the backpack arrived torn. We can refund the 89.00 EUR."
    )
    assert done["xstate.done.actor.draft"] == {"text": expected_draft, "finishReason": "stop", "model": large}
    assert done["xstate.done.actor.finalReply"]["finishReason"] == "length"
    assert done["xstate.done.actor.classify"]["text"] == "shipping"

    # One usage entry per call, equal to what the server sent, billed to the model that answered.
    assert usage_entries(entries) == SUPPORT_USAGE[provider.name]

    # Each call carried its call key; the logic's model= overrode the executor's default model.
    assert [r.headers["idempotency-key"] for r in server.requests] == [
        call_key(entries, rid) for rid in ("classify#1", "draft#1", "chooseAction#1", "finalReply#1")
    ]
    assert [r.body["model"] for r in server.requests] == ["scripted/small", "scripted/large", "scripted/large", "scripted/large"]
    # The key went where it belongs (the auth header), and nowhere in the log.
    assert any(provider.key in value for value in server.requests[0].headers.values())
    assert_no_secret(entries, provider)


# -- text, a stream, a re-asked decision with a schema, a plan -----------------------------------------------


async def test_a_triage_run_streams_live_retries_refused_choices_and_plans(
    provider: Provider, server: ProviderServer, sqlite: Any
) -> None:
    script_triage(server, provider)
    seen: list[str] = []
    chunks: list[tuple[str, bool]] = []

    def on_chunk(chunk: str) -> None:
        # Live: the stream's chunks arrive before its completion is journaled.
        chunks.append((chunk, "xstate.done.actor.reply" in seen))

    result = await run_agent(
        triage_agent, input=TRIAGE_INPUT, store=sqlite, thread_id="t", executors=provider.executors(server),
        on_chunk=on_chunk, on_event=lambda entry: seen.append(entry["event"]["type"]),
    )
    assert result.status == "done", (result.cause, result.error)
    entries = await sqlite.read("t")
    assert verify_log(triage_agent, entries, strict=True).ok

    assert chunks == [("We are ", False), ("sorry about ", False), ("the double charge.", False)]
    mini = "gpt-test-mini-2026-01-01" if provider.name == "openai" else "claude-test-haiku-20260101"
    assert result.output["reply"] == {"text": "We are sorry about the double charge.", "finishReason": "stop", "model": mini}
    # Only the final text is journaled: no entry carries a chunk.
    assert not [e for e in entries if e["event"].get("output", {}) and "chunk" in json.dumps(e["event"]["output"])]
    assert result.output["refund"] == {"type": "REFUND", "amountCents": 4000, "reason": "double charge"}
    assert result.output["tags"] == ["billing"]
    assert result.output["plan"] == {"steps": [{"type": "ADD_TAG", "tag": "billing"}], "stopped": "done"}
    assert usage_entries(entries) == TRIAGE_USAGE[provider.name]

    by_rule = {name: server.requests_for(needle) for name, needle in (
        ("summary", "Summarise:"), ("reply", "Write a reply about"), ("choose", "Decide on the ticket"),
        ("tag", "Tag the ticket"),
    )}
    # Prompt shape and options: system + messages, the logic's temperature and maxTokens, the request's model.
    summary = by_rule["summary"][0].body
    assert summary["model"] == SUMMARY_MODEL
    assert summary["temperature"] == 0.1 and summary["max_tokens"] == 64
    if provider.name == "openai":
        assert summary["messages"][0] == {"role": "system", "content": "You summarise support tickets in one sentence."}
    else:
        assert summary["system"] == "You summarise support tickets in one sentence."
        assert [m["role"] for m in summary["messages"]] == ["user"]
    # The stream used the SDK's streaming API and asked for usage.
    reply = by_rule["reply"][0].body
    assert reply["stream"] is True
    assert reply["model"] == "default-model"
    if provider.name == "openai":
        assert reply["stream_options"] == {"include_usage": True}

    # The decision: one tool per legal event, parameters = the event's JSON schema, exactly one call forced.
    choose = [r.body for r in by_rule["choose"]]
    assert len(choose) == 3
    tools = choose[0]["tools"]
    names = [t["function"]["name"] if provider.name == "openai" else t["name"] for t in tools]
    assert names == ["REFUND", "ESCALATE"]
    refund = tools[0]["function"]["parameters"] if provider.name == "openai" else tools[0]["input_schema"]
    assert refund["required"] == ["amountCents", "reason"]
    assert set(refund["properties"]) == {"amountCents", "reason"}
    assert refund["properties"]["amountCents"]["exclusiveMinimum"] == 0
    if provider.name == "openai":
        assert choose[0]["tool_choice"] == "required" and choose[0]["parallel_tool_calls"] is False
    else:
        assert choose[0]["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    # Re-asked: each attempt says what was refused, and has a key of its own derived from the call key.
    assert "amountCents" in json.dumps(choose[1]["messages"][-1]) and "invalid" in json.dumps(choose[1]["messages"][-1])
    assert "guard refused" in json.dumps(choose[2]["messages"][-1])
    key = call_key(entries, "choose#1")
    assert keys_for(server, "Decide on the ticket") == [key, f"{key}/attempt-2", f"{key}/attempt-3"]

    # The plan: legal tool names (agent.plan.done mapped, and mapped back), one key per step.
    plan_tools = by_rule["tag"][0].body["tools"]
    plan_names = [t["function"]["name"] if provider.name == "openai" else t["name"] for t in plan_tools]
    assert plan_names == ["ADD_TAG", "agent_plan_done"] and all(TOOL_NAME.match(n) for n in plan_names)
    tag_key = call_key(entries, "tag#1")
    assert keys_for(server, "Tag the ticket") == [tag_key, f"{tag_key}/step-2"]
    assert_no_secret(entries, provider)


# -- idempotency across a crash ------------------------------------------------------------------------------


@pytest.mark.parametrize("site", ["summarize", "reply", "choose", "tag"])
async def test_a_call_re_executed_after_a_crash_cut_presents_the_same_idempotency_key(
    provider: Provider, server: ProviderServer, sqlite: Any, tmp_path: Any, site: str
) -> None:
    from agent_explorer.stores import SqliteEventLogStore

    script_triage(server, provider)
    whole = await run_agent(triage_agent, input=TRIAGE_INPUT, store=sqlite, thread_id="t", executors=provider.executors(server))
    assert whole.status == "done", (whole.cause, whole.error)
    entries = await sqlite.read("t")
    request_id = f"{site}#1"
    # Cut before the first entry that records the call's outcome (its completion, or the event it chose).
    cut = next(i for i, e in enumerate(entries) if e.get("causationId") == request_id and e["event"]["type"] != "@agent.usage")
    needle = {"summarize": "Summarise:", "reply": "Write a reply about", "choose": "Decide on the ticket", "tag": "Tag the ticket"}[site]
    first_keys = keys_for(server, needle)

    before = len(server.requests)
    for rule in server.rules:
        rule.served = 0  # the model answers the re-executed call as it did the first time
    crashed = SqliteEventLogStore(str(tmp_path / "crashed.db"))
    try:
        await crashed.append(thread_id="t", expected_index=0, entries=entries[:cut])
        resumed = await run_agent(triage_agent, store=crashed, thread_id="t", executors=provider.executors(server))
        assert resumed.status == "done", (resumed.cause, resumed.error)
        resumed_entries = await crashed.read("t")
    finally:
        await crashed.aclose()

    again = server.requests[before:]
    assert again, "nothing was re-executed"
    assert again[0].headers["idempotency-key"] == first_keys[0] == call_key(entries, request_id)
    assert [r.headers["idempotency-key"] for r in again if needle in r.text()] == first_keys
    # Calls recorded before the cut were not made again.
    recorded = {e["causationId"] for e in entries[:cut] if e.get("causationId")}
    assert not [r for r in again for rid in recorded if r.headers["idempotency-key"].startswith(call_key(entries, rid))]
    assert resumed.output == whole.output
    assert resumed_entries[:cut] == entries[:cut]
    assert verify_log(triage_agent, resumed_entries, strict=True).ok
    assert usage_entries(resumed_entries) == usage_entries(entries)


# -- the SDK's retries stay inside one call ------------------------------------------------------------------


@pytest.mark.parametrize("failure", ["429", "500", "timeout"])
async def test_a_retried_call_is_journaled_once(provider: Provider, server: ProviderServer, sqlite: Any, failure: str) -> None:
    first = {
        "429": provider.json("error_429.json", 429, retry_after_ms="20"),
        "500": provider.json("error_500.json", 500, retry_after_ms="20"),
        "timeout": json_reply(f"{provider.name}/triage_summary.json", delay=1.5),  # stalls past the client's timeout
    }[failure]
    script_triage(server, provider, summary=[first, provider.json("triage_summary.json")])
    executors = provider.executors(server, max_retries=2, timeout=0.5 if failure == "timeout" else 5.0)
    result = await run_agent(triage_agent, input=TRIAGE_INPUT, store=sqlite, thread_id="t", executors=executors)
    assert result.status == "done", (result.cause, result.error)
    entries = await sqlite.read("t")

    attempts = server.requests_for("Summarise:")
    assert len(attempts) == 2
    assert [r.headers["idempotency-key"] for r in attempts] == [call_key(entries, "summarize#1")] * 2
    assert [r.headers["x-stainless-retry-count"] for r in attempts] == ["0", "1"]
    types = [e["event"]["type"] for e in entries]
    assert types.count("xstate.done.actor.summarize") == 1
    assert "xstate.error.actor.summarize" not in types
    assert [u for u in usage_entries(entries) if u[0] == "summarize#1"] == [TRIAGE_USAGE[provider.name][0]]
    assert verify_log(triage_agent, entries, strict=True).ok


# -- what still fails is the actor's error completion ---------------------------------------------------------


@pytest.mark.parametrize("failure", ["500", "401", "malformed"])
async def test_a_hard_failure_settles_the_run_as_on_error_says(
    provider: Provider, server: ProviderServer, sqlite: Any, failure: str
) -> None:
    reply = {
        "500": provider.json("error_500.json", 500, retry_after_ms="10"),
        "401": provider.json("error_401.json", 401),
        "malformed": raw_reply(fixture(f"{provider.name}/malformed.json")),
    }[failure]
    script_triage(server, provider, summary=[reply])
    result = await run_agent(
        triage_agent, input=TRIAGE_INPUT, store=sqlite, thread_id="t", executors=provider.executors(server, max_retries=1)
    )
    # onError took the run to `failed`, a final state: the run is done, with the error in its output.
    assert result.status == "done", (result.cause, result.error)
    assert result.snapshot.value == "failed"
    entries = await sqlite.read("t")
    assert verify_log(triage_agent, entries, strict=True).ok
    errors = [e for e in entries if e["event"]["type"] == "xstate.error.actor.summarize"]
    assert len(errors) == 1 and errors[0]["causationId"] == "summarize#1"
    error = errors[0]["event"]["error"]
    assert error == result.output["error"]
    assert set(error) <= {"name", "message", "cause"} and error["name"] == "ProviderError"
    assert "summarize#1" in error["message"]
    assert [u for u in usage_entries(entries) if u[0] == "summarize#1"] == []  # a failed call reports no usage
    attempts = server.requests_for("Summarise:")
    if failure == "500":
        assert len(attempts) == 2  # the first try and max_retries=1 retry, then the SDK gave up
        assert "HTTP 500" in error["message"]
        assert error["cause"]["name"] == "InternalServerError"
    elif failure == "401":
        assert len(attempts) == 1  # not retryable
        assert "HTTP 401" in error["message"] and "[redacted]" in error["message"]
        assert error["cause"]["name"] == "AuthenticationError"
    else:
        assert len(attempts) == 1  # a 200 whose body is not JSON: nothing to retry
        assert error["cause"]["name"] == "JSONDecodeError"
    assert_no_secret(entries, provider)
    assert_no_secret([{"error": str(result.output)}], provider)


async def test_a_stream_that_fails_settles_through_on_error(provider: Provider, server: ProviderServer) -> None:
    provider.on(server, "summary", "Summarise:", provider.json("triage_summary.json"))
    provider.on(server, "reply", "Write a reply about", provider.json("error_500.json", 500, retry_after_ms="10"))
    result = await run_agent(triage_agent, input=TRIAGE_INPUT, executors=provider.executors(server, max_retries=1))
    assert result.status == "done" and result.snapshot.value == "failed"
    assert result.output["error"]["name"] == "ProviderError"
    assert [e["event"]["type"] for e in result.events][-1] == "xstate.error.actor.reply"
    assert len(server.requests_for("Write a reply about")) == 2


async def test_a_decision_refused_every_time_journals_each_attempts_usage(
    provider: Provider, server: ProviderServer
) -> None:
    provider.on(server, "summary", "Summarise:", provider.json("triage_summary.json"))
    provider.on(server, "reply", "Write a reply about", provider.sse("triage_reply.sse"))
    provider.on(server, "choose", "Decide on the ticket", provider.json("triage_choose_over_limit.json"))
    result = await run_agent(triage_agent, input=TRIAGE_INPUT, executors=provider.executors(server))
    assert result.status == "done" and result.snapshot.value == "failed"
    entries = result.events
    error = next(e for e in entries if e["event"]["type"] == "xstate.error.actor.choose")["event"]["error"]
    assert "no acceptable choice in 3 attempts" in error["message"]
    over_limit = TRIAGE_USAGE[provider.name][3]
    # The three refused attempts were billed, so all three are journaled.
    assert [u for u in usage_entries(entries) if u[0] == "choose#1"] == [over_limit] * 3
    assert verify_log(triage_agent, entries, strict=True).ok


async def test_a_tool_call_with_unusable_arguments_is_refused_and_asked_again(
    provider: Provider, server: ProviderServer
) -> None:
    provider.on(server, "summary", "Summarise:", provider.json("triage_summary.json"))
    provider.on(server, "reply", "Write a reply about", provider.sse("triage_reply.sse"))
    provider.on(
        server, "choose", "Decide on the ticket",
        provider.json("triage_choose_bad_arguments.json"), provider.json("triage_choose_ok.json"),
    )
    provider.on(server, "tag", "Tag the ticket", provider.json("triage_tag_done.json"))
    result = await run_agent(triage_agent, input=TRIAGE_INPUT, executors=provider.executors(server))
    assert result.status == "done" and result.snapshot.value == "done", (result.cause, result.error)
    assert result.output["refund"] == {"type": "REFUND", "amountCents": 4000, "reason": "double charge"}
    asked = server.requests_for("Decide on the ticket")
    assert len(asked) == 2
    assert "(bad arguments for REFUND)" in json.dumps(asked[1].body["messages"][-1])
    bad = {"openai": {"inputTokens": 118, "outputTokens": 16, "totalTokens": 134},
           "anthropic": {"inputTokens": 148, "outputTokens": 12, "totalTokens": 160}}[provider.name]
    choose_usage = [u[2] for u in usage_entries(result.events) if u[0] == "choose#1"]
    assert choose_usage == [bad, TRIAGE_USAGE[provider.name][4][2]]
    assert verify_log(triage_agent, result.events, strict=True).ok
