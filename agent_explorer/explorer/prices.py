"""Prices: what a run's usage cost, from token counts and the user's price list (USD per million tokens).

`Explorer(..., prices={"model-id": {"input": 3.0, "output": 15.0}})`. A record that carries its own cost (a
numeric usage field named like `costUsd`) keeps it; a priced model's records are costed from their tokens; a
model without a price has no cost (never a zero that looks like one). Pure arithmetic over the entries.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import AgentError
from .protocol import CostView

__all__ = ["PRICE_KEYS", "Prices", "record_cost"]

# Which token count each price applies to. `input` / `output` are required; cached reads and cache writes, when
# a provider reports them (agent_explorer.providers journals them under these names), are priced on top.
PRICE_KEYS = {
    "input": "inputTokens",
    "output": "outputTokens",
    "cachedInput": "cachedInputTokens",
    "cacheCreationInput": "cacheCreationInputTokens",
}
PER = 1_000_000


class Prices:
    """A validated price list: `prices.cost(model, usage)` -> USD, or None for a model without a price."""

    def __init__(self, table: Mapping[str, Mapping[str, float]] | None) -> None:
        self.table: dict[str, dict[str, float]] = {}
        for model, rates in (table or {}).items():
            if not isinstance(rates, Mapping):
                raise AgentError(
                    f"prices[{model!r}] must be a dict like {{'input': 3.0, 'output': 15.0}} (USD per million "
                    f"tokens), got {type(rates).__name__}",
                    code="invalid-prices",
                )
            unknown = sorted(set(rates) - set(PRICE_KEYS))
            missing = sorted({"input", "output"} - set(rates))
            if unknown or missing:
                raise AgentError(
                    f"prices[{model!r}]: " + "; ".join(
                        ([f"unknown keys {unknown} (known: {sorted(PRICE_KEYS)})"] if unknown else [])
                        + ([f"missing {missing}"] if missing else [])
                    ),
                    code="invalid-prices",
                )
            for key, rate in rates.items():
                if isinstance(rate, bool) or not isinstance(rate, (int, float)) or rate < 0 or rate != rate:
                    raise AgentError(
                        f"prices[{model!r}][{key!r}] must be a non-negative number of USD per million tokens, "
                        f"got {rate!r}",
                        code="invalid-prices",
                    )
            self.table[str(model)] = {key: float(rate) for key, rate in rates.items()}

    def __bool__(self) -> bool:
        return bool(self.table)

    def cost(self, model: str | None, usage: Mapping[str, Any]) -> float | None:
        rates = self.table.get(str(model)) if model is not None else None
        if rates is None:
            return None
        total = 0.0
        for key, rate in rates.items():
            count = usage.get(PRICE_KEYS[key])
            if isinstance(count, (int, float)) and not isinstance(count, bool):
                total += rate * count / PER
        return total

    def cost_of_totals(self, totals: Mapping[str, Any]) -> CostView | None:
        """`{"total": usd, "byModel": {model: usd}}` of `get_usage_from_events` totals (per-model counts), or
        None when no model of the totals has a price."""
        by_model = totals.get("byModel") if isinstance(totals, Mapping) else None
        if not isinstance(by_model, Mapping):
            return None
        costs = {str(m): c for m, counts in by_model.items() if (c := self.cost(str(m), counts)) is not None}
        if not costs:
            return None
        return {"total": sum(costs.values()), "byModel": costs, "unpriced": sorted(set(map(str, by_model)) - set(costs))}


def record_cost(numbers: Mapping[str, Any], model: str | None, prices: Prices | None) -> float | None:
    """The cost of one usage record: what it recorded itself (numeric fields named like `cost`), else its price."""
    recorded = [v for k, v in numbers.items() if "cost" in k.lower()]
    if recorded:
        return float(sum(recorded))
    return prices.cost(model, numbers) if prices is not None else None
