"""The long run's fast path writes exactly what `run_agent` records for the same inbox, entry for entry.

That equality is what lets the 100,001-entry sample be written without 20,000 `run_agent` calls and still be a
real recorded run: same events, causation ids, usage records, timestamps and ids, same state hashes.
"""

from __future__ import annotations

import json

from agent_explorer.eventlog import verify_log
from agent_explorer.samples import inbox_agent
from agent_explorer.samples.long_run import (
    entries_for_tickets,
    long_run_entries,
    record_inbox_with_run_agent,
)
from agent_explorer.stores import SqliteEventLogStore


async def test_the_fast_path_equals_run_agent_byte_for_byte(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tickets = 15
    store = SqliteEventLogStore(tmp_path / "inbox.db")
    try:
        recorded = await record_inbox_with_run_agent(tickets, store, "inbox-long")
        stored = await store.read_raw("inbox-long")
    finally:
        await store.aclose()
    fast = list(long_run_entries(tickets, "inbox-long"))
    assert len(recorded) == len(fast) == entries_for_tickets(tickets)
    for made, seen in zip(fast, recorded, strict=True):
        assert json.dumps(made) == json.dumps(seen)
    assert [json.loads(text) for text in stored] == fast
    assert verify_log(inbox_agent, fast).ok


def test_a_shorter_run_is_a_prefix_of_a_longer_one() -> None:
    # What the samples test relies on to compare the committed long run with a short regeneration.
    assert list(long_run_entries(4)) == list(long_run_entries(9))[: entries_for_tickets(4)]
