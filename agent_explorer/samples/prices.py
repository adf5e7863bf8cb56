"""Illustrative prices for the sample runs' scripted models (USD per million tokens; not any vendor's list), so
the explorer's usage panel and ledger show what the samples would cost: `Explorer(..., prices=SAMPLE_PRICES)`."""

from __future__ import annotations

__all__ = ["SAMPLE_PRICES"]

SAMPLE_PRICES: dict[str, dict[str, float]] = {
    "scripted/small": {"input": 0.15, "output": 0.60},
    "scripted/large": {"input": 3.00, "output": 15.00},
}
