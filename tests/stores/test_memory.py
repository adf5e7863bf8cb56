"""The in-memory reference store: conformance, and the behaviours only a reference can show cheaply."""

from __future__ import annotations

import asyncio

import pytest

from agent_explorer.errors import AgentEventLogConflictError
from agent_explorer.stores.conformance import (
    CONFORMANCE_CASES,
    ConformanceCase,
    assert_event_log_store_conformance,
    run_conformance_case,
)
from agent_explorer.stores.memory import (
    InMemoryEventLogStore,
    create_in_memory_event_log_store,
)

from .conftest import make_entries


@pytest.mark.parametrize("case", CONFORMANCE_CASES, ids=lambda case: case.id)
async def test_memory_store_conforms(case: ConformanceCase) -> None:
    await run_conformance_case(create_in_memory_event_log_store, case)


async def test_whole_suite_runs_with_describe_and_it_hooks() -> None:
    seen: list[str] = []

    def describe(name, body):
        seen.append(f"describe {name}")
        return body()

    async def it(name, body):
        seen.append(f"it {name}")
        await body()

    async def factory():
        return create_in_memory_event_log_store()

    await assert_event_log_store_conformance(factory, describe=describe, it=it)
    assert seen[0] == "describe append"
    assert sum(line.startswith("it ") for line in seen) == len(CONFORMANCE_CASES)


async def test_suite_reports_a_broken_store() -> None:
    # A store that forgets the length check must fail the suite with a message naming the check.
    class Sloppy(type(create_in_memory_event_log_store())):  # type: ignore[misc]
        async def append(self, *, thread_id, expected_index, entries):
            try:
                return await super().append(thread_id=thread_id, expected_index=expected_index, entries=entries)
            except AgentEventLogConflictError:
                return await self.length(thread_id)

    with pytest.raises(AssertionError, match="stale expected index is a conflict"):
        await assert_event_log_store_conformance(Sloppy)


async def test_many_tasks_appending_in_turn_keep_the_thread_contiguous() -> None:
    store = create_in_memory_event_log_store()
    await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 1))

    async def writer(w: int) -> int:
        wins = 0
        for _ in range(50):
            length = await store.length("t")
            entries = [dict(e, id=f"w{w}-{e['index']}") for e in make_entries(length, 2)]
            try:
                await store.append(thread_id="t", expected_index=length, entries=entries)
                wins += 1
            except AgentEventLogConflictError:
                pass
        return wins

    wins = await asyncio.gather(*(writer(w) for w in range(6)))
    entries = await store.read("t")
    assert [e["index"] for e in entries] == list(range(len(entries)))
    assert len(entries) == 1 + 2 * sum(wins)


def test_sync_facade_works_without_an_event_loop() -> None:
    store = create_in_memory_event_log_store()
    assert store.sync.append(thread_id="t", expected_index=0, entries=make_entries(0, 3)) == 3
    assert store.sync.length("t") == 3
    assert [e["index"] for e in store.sync.read("t", 1)] == [1, 2]
    assert store.sync.list_threads() == [("t", 3)]
    store.sync.close()


async def test_sync_facade_works_inside_a_running_loop() -> None:
    # As in Jupyter: a loop is running in this thread, yet the blocking facade still answers.
    store = create_in_memory_event_log_store()
    await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 2))
    assert store.sync.length("t") == 2
    await store.aclose()


class _SortsKeys(InMemoryEventLogStore):
    """What a jsonb column would do: keys come back sorted (and the text re-serialised)."""

    async def read_raw(self, thread_id, from_index=0, to_index=None, *, limit=None):  # type: ignore[no-untyped-def]
        import orjson

        texts = await super().read_raw(thread_id, from_index, to_index, limit=limit)
        return [orjson.dumps(orjson.loads(t), option=orjson.OPT_SORT_KEYS).decode() for t in texts]


class _ForksOverAnything(InMemoryEventLogStore):
    """Forgets that a fork's target must be empty."""

    async def fork(self, *, thread_id, new_thread_id, up_to_index):  # type: ignore[no-untyped-def]
        with self._lock:
            self._threads.pop(new_thread_id, None)
        return await super().fork(thread_id=thread_id, new_thread_id=new_thread_id, up_to_index=up_to_index)


class _TearsBatches(InMemoryEventLogStore):
    """Writes the valid head of a batch before noticing a duplicate id further on."""

    async def append(self, *, thread_id, expected_index, entries):  # type: ignore[no-untyped-def]
        from agent_explorer.stores.base import check_index

        check_index(expected_index, "expected_index")
        if isinstance(entries, (list, tuple)) and len(entries) > 1:
            for k, entry in enumerate(entries):
                await super().append(thread_id=thread_id, expected_index=expected_index + k, entries=[entry])
            return expected_index + len(entries)
        return await super().append(thread_id=thread_id, expected_index=expected_index, entries=entries)


@pytest.mark.parametrize(
    ("mutant", "caught_by"),
    [(_SortsKeys, "json round trips exactly"), (_ForksOverAnything, "fork onto a non empty thread"), (_TearsBatches, "indices must be contiguous: a batch with a repeat")],
    ids=["sorted-keys", "fork-over-entries", "torn-batches"],
)
async def test_suite_catches_broken_stores(mutant: type, caught_by: str) -> None:
    with pytest.raises(AssertionError, match=caught_by):
        await assert_event_log_store_conformance(mutant)
