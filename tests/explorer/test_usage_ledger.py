"""The usage ledger: rows per @agent.usage record with the state it was journaled in; sums; cost; branches."""

from __future__ import annotations

import json
from typing import Any

from sample_run import long_events, make_machine, record, usage

from agent_explorer import get_usage_from_events
from agent_explorer.engine.values import value_text
from agent_explorer.explorer import Explorer


def with_cost(event: dict[str, Any], cost: float) -> dict[str, Any]:
    return {**event, "usage": {**event["usage"], "costUsd": cost}}


def test_rows_carry_the_state_the_machine_was_in_and_running_totals(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    ex = Explorer(machine, entries)
    ledger = ex.usage()
    frame = ledger.to_pandas()
    assert list(frame["index"]) == [3, 6] and list(frame["model"]) == ["small", "large"]
    # At 3 the draft is being written; at 6 it is in review (DONE at 5 moved it).
    assert list(frame["state"]) == [
        value_text(ex.line.timeline.state_at(3).value),
        value_text(ex.line.timeline.state_at(6).value),
    ]
    assert "writing" in frame["state"][0] and "review" in frame["state"][1]
    assert list(frame["cumulativeTokens"]) == [40, 160]
    assert "cost" not in frame  # no record carried a cost
    # Reads as the totals dict of get_usage_from_events, as before the ledger.
    assert dict(ledger) == get_usage_from_events(entries)
    assert ex.usage(at=3) == ex.usage(at=5) == get_usage_from_events(entries[:4])
    assert ex.usage(at=2) == {}


def test_sums_by_model_and_by_state_match_get_usage_from_events(machine: Any) -> None:
    events = long_events(300)
    events = [
        usage(i, "big" if i % 3 else "small", 10 + i % 7)
        if e["type"] == "@agent.usage"
        else e
        for i, e in enumerate(events)
    ]
    log = record(machine, events)
    ledger = Explorer(machine, log).usage()
    by_model = ledger.by_model()
    truth = get_usage_from_events(log)["byModel"]
    assert {m: int(by_model.loc[m, "totalTokens"]) for m in by_model.index} == {
        m: t["totalTokens"] for m, t in truth.items()
    }
    assert int(by_model["records"].sum()) == 60
    by_state = ledger.by_state()
    assert (
        int(by_state["totalTokens"].sum())
        == truth["big"]["totalTokens"] + truth["small"]["totalTokens"]
    )
    assert set(by_state.index) <= {value_text(v) for v in _values(machine, log)}
    both = ledger.by_model_and_state()
    assert int(both["totalTokens"].sum()) == int(by_state["totalTokens"].sum())


def _values(machine: Any, log: list[dict[str, Any]]) -> list[Any]:
    from agent_explorer import Timeline

    timeline = Timeline(machine, log)
    return [timeline.state_at(i).value for i in range(len(log))]


def test_cost_is_summed_where_entries_carry_it(machine: Any) -> None:
    events = [
        {"type": "START"},
        with_cost(usage(2, "a", 30), 0.25),
        {"type": "TICK"},
        usage(4, "b", 10),
        with_cost(usage(5, "a", 20), 0.5),
    ]
    log = record(machine, events)
    ex = Explorer(machine, log)
    frame = ex.usage().to_pandas()
    assert list(frame["cost"].fillna(-1)) == [0.25, -1, 0.5] and list(
        frame["cumulativeCost"]
    ) == [0.25, 0.25, 0.75]
    assert ex.usage().by_model().loc["a", "cost"] == 0.75
    assert ex.usage_ledger["hasCost"] is True and ex.usage_ledger["cost"] == 0.75


def test_compare_with_branches_side_by_side_and_in_the_widget(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    ex = Explorer(machine, entries)
    branch = ex.fork(at=5)  # keeps the first usage record only
    ledger = ex.usage(compare=branch)
    table = ledger.compare()
    assert table.loc["large"].tolist() == [120, 0] and table.loc["(all)"].tolist() == [
        160,
        40,
    ]
    published = ex.usage_ledger
    json.dumps(published)
    assert published["series"] == {"small": [[3, 40]], "large": [[6, 120]]}
    assert (
        published["branches"][0]["series"] == [[3, 40]]
        and published["branches"][0]["forkedAt"] == 5
    )
    assert [row[0] for row in published["byModel"]] == ["large", "small"]


def test_the_panel_button_asks_for_the_ledger(machine: Any) -> None:
    ex = Explorer(machine, record(machine, long_events(60)))
    assert ex.usage_ledger == {}
    ex._on_message(ex, {"kind": "usage-ledger"}, [])
    assert ex.usage_ledger["records"] == 12 and ex.usage_ledger["total"] == 12 * 30


def test_series_are_downsampled_but_end_at_each_models_total() -> None:
    machine = make_machine()
    log = record(machine, long_events(5_000))
    ledger = Explorer(machine, log).usage().to_json(max_points=50)
    points = ledger["series"]["small"]
    assert len(points) <= 52 and points[-1] == [5_000, 1_000 * 30]


def test_spend_is_also_attributed_to_the_state_that_waited_on_the_request() -> None:
    from pathlib import Path

    from agent_explorer import read_log
    from agent_explorer.samples import support_agent

    log = read_log(
        Path(__file__).resolve().parents[2] / "sample_logs" / "support_clean.jsonl"
    )
    frame = Explorer(support_agent, log).usage().to_pandas()
    # classify#1 completes at 2 (triaging -> drafting) and is journaled at 3, when the agent already drafts.
    first = frame.iloc[0]
    assert (first["requestId"], first["state"], first["requestedIn"]) == (
        "classify#1",
        "drafting",
        "triaging",
    )
    assert list(frame["requestedIn"]) == [
        "triaging",
        "drafting",
        "deciding",
        "replying",
    ]


def _five_minute_agent() -> Any:
    """The README's five-minute agent: it asks a model for an answer, then waits for the customer."""
    from agent_explorer import assign, create_text_logic, setup_agent

    return setup_agent(
        actors={"answer": create_text_logic(prompt=lambda context, event: f"Answer: {context['question']}")},
    ).create_machine({
        "id": "support_bot",
        "version": "1",
        "context": lambda input: {"question": input["question"], "reply": None},
        "initial": "answering",
        "states": {
            "answering": {"invoke": {"src": "answer", "id": "answer", "onDone": {
                "target": "waiting", "actions": assign({"reply": lambda c, e, p: e["output"]["text"]})}}},
            "waiting": {"on": {"RESOLVED": "resolved"}},
            "resolved": {"type": "final"},
        },
    })


def test_the_panel_counts_a_model_call_under_the_state_that_made_the_request() -> None:
    # run_agent journals the call's completion first (answering -> waiting), then its usage: the 42 tokens were
    # spent by `answering`, which asked, not by `waiting`, the state the machine is in when they are journaled.
    import asyncio

    from agent_explorer import ScriptedModel, create_in_memory_event_log_store, run_agent

    agent = _five_minute_agent()

    async def record_run() -> list[dict[str, Any]]:
        store = create_in_memory_event_log_store()
        model = ScriptedModel(["A replacement ships today."],
                              usage={"inputTokens": 31, "outputTokens": 11, "totalTokens": 42})
        await run_agent(agent, input={"question": "My lamp arrived broken."}, store=store, thread_id="t",
                        executors=model)
        return list(await store.read("t"))

    log = asyncio.run(record_run())
    assert [e["event"]["type"] for e in log] == ["@agent.init", "xstate.done.actor.answer", "@agent.usage"]
    ex = Explorer(agent, log)
    ledger = ex.usage()
    row = ledger.rows()[0]
    assert (row["state"], row["requestedIn"]) == ("waiting", "answering")
    assert ledger.to_json()["byState"] == [["answering", 1, 42, None]]
    ex._on_message(ex, {"kind": "usage-ledger"}, [])  # what the widget's "state when spent" table draws
    assert ex.usage_ledger["byState"] == [["answering", 1, 42, None]]


def test_each_record_is_spent_by_the_state_waiting_before_the_reply_it_follows() -> None:
    from types import SimpleNamespace

    from agent_explorer.explorer.usage import UsageLedger

    def usage(index: int) -> dict[str, Any]:
        return {"index": index, "causationId": "r1", "event": {
            "type": "@agent.usage", "requestId": "r1", "model": "m", "usage": {"totalTokens": 10}}}

    def reply(index: int) -> dict[str, Any]:
        return {"index": index, "causationId": "r1", "event": {"type": "DECIDED"}}

    # One request id answered twice (a decision per step): a record before any reply is spent by the state still
    # waiting at its own index; after a reply, by the state just before the latest reply it follows.
    entries = [{"index": 0, "event": {"type": "@agent.init"}}, usage(1), reply(2), usage(3), reply(4), usage(5)]
    ledger = UsageLedger(entries, lambda i: SimpleNamespace(value=f"s{i}"))
    assert [(row["index"], row["state"], row["requestedIn"]) for row in ledger.rows()] == [
        (1, "s1", "s1"), (3, "s3", "s1"), (5, "s5", "s3")]
    assert ledger.to_json()["byState"] == [["s1", 2, 20, None], ["s3", 1, 10, None]]
