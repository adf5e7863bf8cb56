"""Usage totals are a projection of the log's @agent.usage records."""

from __future__ import annotations

from typing import Any

from agent_explorer.eventlog.entries import create_replay_entry
from agent_explorer.eventlog.usage import get_usage_from_events

from .conftest import StandInMachine, build_log


def usage_event(model: str | None, **usage: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "@agent.usage", "requestId": "r#1", "usage": usage}
    if model is not None:
        event["model"] = model
    return event


def test_an_empty_log_totals_zero() -> None:
    assert get_usage_from_events([]) == {
        "inputTokens": 0,
        "outputTokens": 0,
        "totalTokens": 0,
        "byModel": {},
    }


def test_totals_are_cumulative_overall_and_per_model() -> None:
    entries = build_log(7)  # six usage records (10/5/15 each), models alternate m-a, m-b
    totals = get_usage_from_events(entries)
    assert totals == {
        "inputTokens": 60,
        "outputTokens": 30,
        "totalTokens": 90,
        "byModel": {
            "m-a": {"inputTokens": 30, "outputTokens": 15, "totalTokens": 45},
            "m-b": {"inputTokens": 30, "outputTokens": 15, "totalTokens": 45},
        },
    }
    # The prefix of a log totals the prefix: the projection follows the log, not a counter.
    assert get_usage_from_events(entries[:3])["totalTokens"] == 30


def test_other_numeric_fields_and_nested_details_are_summed() -> None:
    events = [
        usage_event(
            "gpt",
            inputTokens=100,
            outputTokens=20,
            totalTokens=120,
            reasoningTokens=7,
            costUsd=0.25,
            inputTokenDetails={"cacheReadTokens": 40, "note": "x"},
            cached=True,
            label="ignored",
        ),
        usage_event(
            "gpt", inputTokens=1, outputTokens=2, totalTokens=3, costUsd=0.5,
            inputTokenDetails={"cacheReadTokens": 2},
        ),
        usage_event("claude", inputTokens=5, outputTokens=5, totalTokens=10, reasoningTokens=1),
    ]
    totals = get_usage_from_events(events)
    assert totals["inputTokens"] == 106 and totals["outputTokens"] == 27
    assert totals["totalTokens"] == 133 and totals["reasoningTokens"] == 8
    assert totals["costUsd"] == 0.75
    assert totals["inputTokenDetails"] == {"cacheReadTokens": 42}
    assert "cached" not in totals and "label" not in totals
    assert totals["byModel"]["gpt"]["inputTokenDetails"] == {"cacheReadTokens": 42}
    assert totals["byModel"]["claude"] == {
        "inputTokens": 5, "outputTokens": 5, "totalTokens": 10, "reasoningTokens": 1,
    }


def test_a_record_without_a_total_counts_input_plus_output() -> None:
    totals = get_usage_from_events([usage_event("m", inputTokens=4, outputTokens=3)])
    assert totals["totalTokens"] == 7


def test_records_without_a_model_count_only_in_the_overall_total() -> None:
    totals = get_usage_from_events(
        [usage_event(None, inputTokens=1, outputTokens=1, totalTokens=2), usage_event("m", totalTokens=5)]
    )
    assert totals["totalTokens"] == 7
    assert totals["byModel"] == {"m": {"inputTokens": 0, "outputTokens": 0, "totalTokens": 5}}


def test_other_events_and_malformed_usage_are_ignored() -> None:
    machine = StandInMachine()
    entries = [
        create_replay_entry(machine, {"type": "ASK", "usage": {"inputTokens": 999}}, 1),
        create_replay_entry(machine, {"type": "@agent.usage", "usage": "lots"}, 2),
        create_replay_entry(machine, usage_event("m", inputTokens=2, totalTokens=2), 3),
    ]
    assert get_usage_from_events(entries)["inputTokens"] == 2


def test_accepts_any_iterable_once() -> None:
    stream = (entry for entry in build_log(5))
    assert get_usage_from_events(stream)["totalTokens"] == 60
