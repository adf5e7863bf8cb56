"""A row's token total is `get_usage_from_events`' total, whatever shape the usage records take (the row folds them
in one pass of its own; hypothesis draws the records, the general totals are the reference)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_explorer.eventlog.usage import get_usage_from_events
from agent_explorer.runs.row import Carry, _add_usage

COUNT = st.one_of(st.integers(-5, 10**6), st.floats(0, 1e6, allow_nan=False), st.booleans(), st.none(), st.text(max_size=2))
FIELD = st.one_of(COUNT, st.dictionaries(st.sampled_from(["cached", "reasoning"]), COUNT, max_size=2))
USAGE = st.dictionaries(st.sampled_from(["inputTokens", "outputTokens", "totalTokens", "costUsd", "other"]), FIELD,
                        max_size=5)
RECORD = st.fixed_dictionaries({"type": st.just("@agent.usage"), "usage": st.one_of(USAGE, st.none(), st.just(3))},
                               optional={"model": st.one_of(st.sampled_from(["m1", "m2", ""]), st.none(), st.just(7))})


def _outcome(call: Any) -> Any:
    try:
        return ("ok", call())
    except Exception as error:  # noqa: BLE001 - both sides must fail alike
        return ("raises", type(error).__name__)


@settings(max_examples=300, deadline=None)
@given(st.lists(RECORD, max_size=5))
def test_a_row_totals_tokens_as_get_usage_from_events(events: list[dict[str, Any]]) -> None:
    entries = [{"event": event} for event in events]

    def row_total() -> Any:
        carry = Carry(1, None, {}, [], 0, 0, 0, None, None, 0, 0.0, {})
        _add_usage(carry, entries)
        return carry.total_tokens

    # What a carry starting at 0 holds after adding the general total (a total that is an object cannot be added).
    expected = _outcome(lambda: 0 + (get_usage_from_events(entries).get("totalTokens", 0) or 0))
    got = _outcome(row_total)
    if expected[0] == "raises":  # the general totals refuse the record: the row's fold must not pass it off as counted
        assert got[0] == "raises"
    else:
        assert got == expected
