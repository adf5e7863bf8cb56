"""Prices: the usage of a run costed per model and per state, from the user's price list (USD per million tokens)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_explorer import Explorer, get_usage_from_events, read_log
from agent_explorer.errors import AgentError
from agent_explorer.explorer.prices import Prices
from agent_explorer.samples import SAMPLE_PRICES, support_agent

LOGS = Path(__file__).parents[2] / "sample_logs"


def expected_cost(entries: list[dict], upto: int) -> float:
    """The cost by hand: every usage record up to `upto`, its model's input and output price."""
    total = 0.0
    for entry in entries[: upto + 1]:
        event = entry["event"]
        if event["type"] == "@agent.usage":
            rates = SAMPLE_PRICES[event["model"]]
            usage = event["usage"]
            total += (rates["input"] * usage["inputTokens"] + rates["output"] * usage["outputTokens"]) / 1e6
    return total


def test_cost_at_the_cursor_in_the_ledger_and_per_state() -> None:
    entries = list(read_log(LOGS / "support_clean.jsonl"))
    ex = Explorer(support_agent, entries, prices=SAMPLE_PRICES)
    ex.index = 7
    cost = ex.frame["cost"]
    assert cost["total"] == pytest.approx(expected_cost(entries, 7)) and cost["unpriced"] == []
    assert set(cost["byModel"]) == set(get_usage_from_events(entries[:8])["byModel"])
    ledger = ex.usage()
    assert ledger.cost_usd == pytest.approx(expected_cost(entries, len(entries) - 1))
    by_state = ledger.by_state()
    assert by_state["cost"].sum() == pytest.approx(ledger.cost_usd)
    assert ledger.by_model()["cost"].sum() == pytest.approx(ledger.cost_usd)
    panel = ex.usage_ledger
    assert panel["hasCost"] and panel["cost"] == pytest.approx(ledger.cost_usd)
    assert all(row[3] is not None for row in panel["byState"])
    # Without prices nothing is costed (and nothing pretends to be free).
    plain = Explorer(support_agent, entries)
    plain.index = 7
    assert "cost" not in plain.frame and plain.usage().cost_usd is None


def test_a_model_without_a_price_is_named_not_counted() -> None:
    entries = list(read_log(LOGS / "support_clean.jsonl"))
    ex = Explorer(support_agent, entries, prices={"scripted/large": SAMPLE_PRICES["scripted/large"]})
    ex.index = len(entries) - 1
    assert ex.frame["cost"]["unpriced"] == ["scripted/small"]
    assert "scripted/small" not in ex.frame["cost"]["byModel"]


@pytest.mark.parametrize(
    ("prices", "says"),
    [
        ({"m": {"input": 1.0}}, "missing ['output']"),
        ({"m": {"input": 1.0, "output": 2.0, "per": 3}}, "unknown keys ['per']"),
        ({"m": {"input": -1, "output": 2.0}}, "non-negative"),
        ({"m": 3.0}, "must be a dict"),
    ],
    ids=["missing", "unknown", "negative", "not-a-dict"],
)
def test_a_bad_price_list_names_the_model_and_the_key(prices: dict, says: str) -> None:
    with pytest.raises(AgentError) as caught:
        Prices(prices)
    assert caught.value.code == "invalid-prices" and says in caught.value.message and "'m'" in caught.value.message


def test_a_recorded_cost_is_kept_over_a_price() -> None:
    prices = Prices({"m": {"input": 1_000_000.0, "output": 0.0}})
    from agent_explorer.explorer.prices import record_cost

    assert record_cost({"inputTokens": 3, "costUsd": 0.5}, "m", prices) == 0.5
    assert record_cost({"inputTokens": 3}, "m", prices) == 3.0
    assert record_cost({"inputTokens": 3}, "other", prices) is None
