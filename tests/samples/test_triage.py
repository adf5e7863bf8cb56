"""The triage store (samples/triage.py): thousands of support runs of mixed fates, each a real fold of its machine.

Each fate is checked against the real engine: what verifies, what diverges under today's machine (and verifies
under the one that recorded it), where each run stands. The generated file is checked in the folder
`ensure_samples` writes (the session's sample_logs fixture).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

from agent_explorer import replay, verify_log
from agent_explorer.samples import support_agent, support_agent_old_policy
from agent_explorer.samples.generate import TRIAGE_FILE
from agent_explorer.samples.shipped import shipped_sample_logs_dir
from agent_explorer.samples.triage import FATES, TRIAGE_THREADS, fate_of, triage_thread_id, triage_threads
from agent_explorer.stores import SqliteEventLogStore

# Where each fate stands under today's support_agent: (verifies, snapshot status, last state).
EXPECTED = {
    "finished": (True, "done", "resolved"),
    "waiting": (True, "active", "awaitingApproval"),
    "crashed": (True, "active", "drafting"),
    "escalated": (True, "done", "escalated"),
    "diverging": (False, "active", "deciding"),
}


@pytest.fixture(scope="module")
def threads() -> list[tuple[str, list[dict[str, object]]]]:
    return list(triage_threads(shipped_sample_logs_dir(), 80))


def test_every_fate_ends_where_its_scenario_says(threads: list[tuple[str, list[dict[str, object]]]]) -> None:
    seen: Counter[str] = Counter()
    for n, (thread_id, entries) in enumerate(threads, start=1):
        fate = fate_of(n)
        seen[fate.name] += 1
        assert thread_id == triage_thread_id(n)
        verifies, status, value = EXPECTED[fate.name]
        assert verify_log(support_agent, entries).ok is verifies, thread_id
        folded = replay(support_agent, entries, verify=False).snapshot
        assert (folded.status, folded.value) == (status, value), thread_id
        if fate.old_policy:  # the machine that recorded it agrees with every hash
            assert verify_log(support_agent_old_policy, entries).ok, thread_id
    assert set(seen) == {fate.name for fate in FATES}  # every page of 20 holds every fate
    assert seen["finished"] > seen["waiting"] > seen["crashed"] >= seen["escalated"]


def test_each_ticket_is_its_own_and_generation_is_deterministic(
    threads: list[tuple[str, list[dict[str, object]]]],
) -> None:
    again = list(triage_threads(shipped_sample_logs_dir(), 80))
    assert again == threads
    tickets = {entries[0]["event"]["input"]["ticket"]["orderId"] for _, entries in threads}  # type: ignore[index]
    assert len(tickets) == len(threads)
    times = [entries[-1]["recordedAt"] for _, entries in threads]
    assert len(set(times)) == len(times)  # "newest first" orders them


def test_the_generated_triage_store_holds_every_thread(sample_logs: Path) -> None:
    async def lengths() -> dict[str, int]:
        store = SqliteEventLogStore(sample_logs / TRIAGE_FILE, read_only=True)
        try:
            found: dict[str, int] = {}
            while page := await store.list_threads(limit=1000, offset=len(found)):
                found.update((info.thread_id, info.length) for info in page)
            return found
        finally:
            await store.aclose()

    found = asyncio.run(lengths())
    assert len(found) == TRIAGE_THREADS
    assert found[triage_thread_id(1)] == len(next(triage_threads(shipped_sample_logs_dir(), 1))[1])
