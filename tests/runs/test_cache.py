"""The run list's cache: outside the store, keyed by what a row was folded from, never trusted past a change.

Each test counts the entries `summarize_runs` folded (`summaries.folded`): a hit folds nothing, a thread grown
by one entry folds that one entry, and whatever the cache holds, the rows equal a fold without it.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pytest

from agent_explorer import summarize_runs
from agent_explorer.runs.summaries import RunSummaries
from agent_explorer.stores.sqlite import SqliteEventLogStore

from . import machines
from .conftest import AGENT, ASK, DONE, PRICES, USAGE, build_sqlite, record, runs

READABLE = [thread_id for thread_id, (_, row) in runs().items() if row.status != "unreadable"]
FOLDABLE = [thread_id for thread_id in READABLE if runs()[thread_id][1].status != "skipped"]
ENTRIES = sum(len(runs()[thread_id][0]) for thread_id in FOLDABLE)


def summarize(url: str, machine: Any = AGENT, **options: Any) -> RunSummaries:
    return summarize_runs(url, machine, threads=READABLE, prices=PRICES, **options)


def cold(url: str, machine: Any = AGENT) -> pd.DataFrame:
    return summarize(url, machine, cache=False).to_pandas()


def append(url: str, thread_id: str, entries: list[dict[str, Any]]) -> None:
    async def go() -> None:
        store = SqliteEventLogStore(url.removeprefix("sqlite:///"))
        try:
            await store.append(thread_id=thread_id, expected_index=await store.length(thread_id), entries=entries)
        finally:
            await store.aclose()

    asyncio.run(go())


def cache_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.sqlite"))


def test_reopening_an_unchanged_store_folds_nothing(sqlite_runs: str, cache_dir: Path) -> None:
    first = summarize(sqlite_runs)
    assert first.folded == ENTRIES and first.cached == 0
    again = summarize(sqlite_runs)
    assert again.folded == 0 and again.cached == len(FOLDABLE)
    pd.testing.assert_frame_equal(again.to_pandas(), first.to_pandas())
    assert len(cache_files(cache_dir)) == 1


def test_a_cached_row_is_priced_by_this_call(sqlite_runs: str) -> None:
    summarize(sqlite_runs)
    repriced = summarize_runs(sqlite_runs, AGENT, threads=READABLE, prices={"m1": {"input": 6.0, "output": 30.0}})
    assert repriced.folded == 0
    assert repriced["a-done"].cost_usd == pytest.approx((100 * 6.0 + 20 * 30.0) / 1e6)


@pytest.mark.parametrize(
    ("thread_id", "history", "grown_by"),
    [
        ("e-reviewing", [ASK, DONE, USAGE], [{"type": "APPROVE"}]),  # idle -> done
        ("c-in-flight", [ASK], [DONE]),  # the request completes: in-flight -> idle
        ("b-idle", [], [{"type": "xstate.after.60000.runs_agent.waiting"}]),  # its owed timer fires: -> done
        ("b-idle", [], [ASK]),  # the timer is left behind (owed no more), a request starts
        ("e-reviewing", [ASK, DONE, USAGE], [{"type": "REJECT"}, USAGE]),  # back to waiting: a timer armed again
    ],
    ids=["approve", "complete", "timer-fires", "request-starts", "re-armed"],
)
def test_a_grown_thread_folds_only_its_new_entries(
    sqlite_runs: str, thread_id: str, history: list[dict[str, Any]], grown_by: list[dict[str, Any]]
) -> None:
    summarize(sqlite_runs)
    tag = thread_id[0]
    append(sqlite_runs, thread_id, record(machines.agent, history + grown_by, tag)[len(history) + 1 :])
    grown = summarize(sqlite_runs)
    assert grown.folded == len(grown_by)
    assert grown.cached == len(FOLDABLE) - 1
    pd.testing.assert_frame_equal(grown.to_pandas(), cold(sqlite_runs))
    again = summarize(sqlite_runs)  # the grown row was cached in turn
    assert again.folded == 0
    pd.testing.assert_frame_equal(again.to_pandas(), cold(sqlite_runs))


def test_a_changed_machine_invalidates(sqlite_runs: str, cache_dir: Path) -> None:
    summarize(sqlite_runs)
    for changed in (machines.agent_rechart, machines.agent_v2):  # the same declared version; another version
        rows = summarize(sqlite_runs, changed)
        assert rows.folded == ENTRIES and rows.cached == 0, changed.version
        pd.testing.assert_frame_equal(rows.to_pandas(), cold(sqlite_runs, changed))
    assert summarize(sqlite_runs).folded == 0  # each machine has a cache of its own
    assert len(cache_files(cache_dir)) == 3


def test_a_corrupt_cache_file_is_rebuilt(sqlite_runs: str, cache_dir: Path) -> None:
    summarize(sqlite_runs)
    (path,) = cache_files(cache_dir)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.write_bytes(b"this is not a database" * 100)
    rebuilt = summarize(sqlite_runs)
    assert rebuilt.folded == ENTRIES and rebuilt.cached == 0
    pd.testing.assert_frame_equal(rebuilt.to_pandas(), cold(sqlite_runs))
    assert summarize(sqlite_runs).folded == 0  # and it serves again


def test_a_cache_file_of_another_store_or_format_is_rebuilt(sqlite_runs: str, cache_dir: Path) -> None:
    summarize(sqlite_runs)
    (path,) = cache_files(cache_dir)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = 'agent-explorer/runs-cache/1' WHERE key = 'format'")
    rebuilt = summarize(sqlite_runs)
    assert rebuilt.folded == ENTRIES
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = 'sqlite:/elsewhere.db#1:2' WHERE key = 'store'")
    assert summarize(sqlite_runs).folded == ENTRIES


def _rewrite(path: Path, thread_id: str, change: Any, *, keep_digest: bool, snapshot: bool = False) -> None:
    """Edit one cache record (its payload, or with `snapshot=True` its persisted snapshot); `keep_digest=False`
    signs the edit as the cache would (a well-formed record that lies)."""
    from agent_explorer.runs.cache import _digest

    with sqlite3.connect(path) as conn:
        payload, persisted = conn.execute("SELECT payload, snapshot FROM threads WHERE thread_id = ?",
                                          (thread_id,)).fetchone()
        record = orjson.loads(persisted if snapshot else payload)
        change(record)
        payload, persisted = (payload, orjson.dumps(record)) if snapshot else (orjson.dumps(record), persisted)
        conn.execute("UPDATE threads SET payload = ?, snapshot = ? WHERE thread_id = ?", (payload, persisted, thread_id))
        if not keep_digest:
            conn.execute("UPDATE threads SET digest = ? WHERE thread_id = ?", (_digest(payload, persisted), thread_id))


def test_a_record_that_does_not_check_is_ignored(sqlite_runs: str, cache_dir: Path) -> None:
    summarize(sqlite_runs)
    (path,) = cache_files(cache_dir)
    _rewrite(path, "c-in-flight", lambda record: record["row"].update(status="done"), keep_digest=True)
    _rewrite(path, "e-reviewing", lambda persisted: persisted.update(value="waiting"), keep_digest=True, snapshot=True)
    rows = summarize(sqlite_runs)
    assert rows["c-in-flight"].status == "in-flight"
    assert rows.folded == len(runs()["c-in-flight"][0]) + len(runs()["e-reviewing"][0])  # refolded, the rest served
    pd.testing.assert_frame_equal(rows.to_pandas(), cold(sqlite_runs))


def test_a_cached_snapshot_is_never_trusted_past_the_hash_it_stands_for(sqlite_runs: str, cache_dir: Path) -> None:
    # A well-formed cache (its digest checks) whose snapshot is not the state the log recorded: a grown thread
    # must not fold on from it.
    summarize(sqlite_runs)
    (path,) = cache_files(cache_dir)
    _rewrite(path, "e-reviewing", lambda persisted: persisted.update(value="waiting"), keep_digest=False, snapshot=True)
    append(sqlite_runs, "e-reviewing", record(machines.agent, [ASK, DONE, USAGE, {"type": "APPROVE"}], "e")[4:])
    rows = summarize(sqlite_runs)
    assert rows.folded == 5  # refolded from its init entry
    pd.testing.assert_frame_equal(rows.to_pandas(), cold(sqlite_runs))
    assert rows["e-reviewing"].status == "done"


def test_a_thread_replaced_by_another_of_the_same_length_is_refolded(tmp_path: Path) -> None:
    # Same thread id and length, another history (another store file at the same path): never served.
    first = build_sqlite(tmp_path / "a.db", {"t": (record(machines.agent, [ASK], "t"), runs()["c-in-flight"][1])})
    assert summarize_runs(first, AGENT)["t"].status == "in-flight"
    (tmp_path / "a.db").unlink()
    other = record(machines.agent, [ASK, FAILED_EVENT], "u")[:2]
    other[1] = record(machines.agent, [{"type": "ASK", "question": "other"}], "u")[1]
    again = build_sqlite(tmp_path / "a.db", {"t": (other, runs()["c-in-flight"][1])})
    rows = summarize_runs(again, AGENT)
    assert rows.folded == 2 and rows.cached == 0


FAILED_EVENT = {"type": "xstate.error.actor.draft", "error": "x"}


def test_the_cache_lives_outside_the_store_and_the_store_is_not_written(sqlite_runs: str, tmp_path: Path,
                                                                        cache_dir: Path) -> None:
    store_file = Path(sqlite_runs.removeprefix("sqlite:///"))
    # The -shm file is SQLite's shared-memory index every reader marks; the database and its WAL hold the data.
    before = {p.name: p.read_bytes() for p in store_file.parent.glob("runs.db*") if not p.name.endswith("-shm")}
    summarize(sqlite_runs)
    summarize(sqlite_runs)
    after = {p.name: p.read_bytes() for p in store_file.parent.glob("runs.db*") if not p.name.endswith("-shm")}
    assert after == before
    assert all(cache_dir in path.parents for path in cache_files(tmp_path))


def test_cache_false_reads_and_writes_no_cache(sqlite_runs: str, cache_dir: Path) -> None:
    assert summarize(sqlite_runs, cache=False).folded == ENTRIES
    assert cache_files(cache_dir) == []


def test_workers_of_a_process_pool_serve_from_the_cache(sqlite_runs: str) -> None:
    import concurrent.futures
    import multiprocessing

    summarize(sqlite_runs)
    append(sqlite_runs, "c-in-flight", record(machines.agent, [ASK, DONE], "c")[2:])
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        rows = summarize(sqlite_runs, executor=pool, batch_size=2)
    assert rows.folded == 1 and rows.cached == len(FOLDABLE) - 1
    pd.testing.assert_frame_equal(rows.to_pandas(), cold(sqlite_runs))


def test_a_served_row_filters_on_its_state_as_a_folded_one(sqlite_runs: str) -> None:
    folded = summarize(sqlite_runs)
    served = summarize(sqlite_runs)
    assert served.folded == 0
    for state in ("drafting", "#runs_agent.sent", "waiting"):
        assert [r.thread_id for r in served.filtered(machines.agent, state=state)] == \
            [r.thread_id for r in folded.filtered(machines.agent, state=state)]
    assert [r.thread_id for r in served.filtered(machines.agent, state="drafting", status="in-flight")] == \
        ["c-in-flight", "g-unhashed"]


class _CountingStore(SqliteEventLogStore):
    """A read-only view of the test store that counts what summarize_runs asks of it."""

    def __init__(self, url: str) -> None:
        super().__init__(url.removeprefix("sqlite:///"), read_only=True)
        self.calls: list[tuple[str, Any]] = []

    async def read(self, thread_id, from_index=0, to_index=None, *, limit=None):  # type: ignore[no-untyped-def]
        self.calls.append(("read", thread_id))
        return await super().read(thread_id, from_index, to_index, limit=limit)

    async def read_raw(self, thread_id, from_index=0, to_index=None, *, limit=None):  # type: ignore[no-untyped-def]
        self.calls.append(("read_raw", thread_id))
        return await super().read_raw(thread_id, from_index, to_index, limit=limit)

    async def thread_heads(self, thread_ids=None):  # type: ignore[no-untyped-def]
        self.calls.append(("thread_heads", None if thread_ids is None else sorted(thread_ids)))
        return await super().thread_heads(thread_ids)


def _counting_cache(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    from agent_explorer.runs.cache import SummaryCache

    reads: list[tuple[str, Any]] = []
    keyed, lookup = SummaryCache.keyed, SummaryCache.lookup

    def counted_keyed(self: SummaryCache, thread_ids: Any = None) -> Any:
        reads.append(("keyed", None if thread_ids is None else sorted(thread_ids)))
        return keyed(self, thread_ids)

    def counted_lookup(self: SummaryCache, thread_ids: Any) -> Any:
        ids = list(thread_ids)
        reads.append(("lookup", sorted(ids)))
        return lookup(self, ids)

    monkeypatch.setattr(SummaryCache, "keyed", counted_keyed)
    monkeypatch.setattr(SummaryCache, "lookup", counted_lookup)
    return reads


@pytest.mark.parametrize("every_thread", [False, True], ids=["named-threads", "every-thread"])
def test_reopening_reads_the_heads_once_and_no_cached_thread(sqlite_runs: str, monkeypatch: pytest.MonkeyPatch,
                                                            every_thread: bool) -> None:
    # Reopening an unchanged store: one bulk head query and one read of the cache file; a thread served from the
    # cache is never read. Only the threads the cache cannot hold (skipped, unreadable) are read, as on every look.
    threads = None if every_thread else READABLE
    first = summarize_runs(sqlite_runs, AGENT, threads=threads, prices=PRICES)
    reads = _counting_cache(monkeypatch)
    store = _CountingStore(sqlite_runs)
    again = summarize_runs(store, AGENT, threads=threads, prices=PRICES)
    asyncio.run(store.aclose())
    uncached = sorted(thread_id for thread_id in first.thread_ids if thread_id not in FOLDABLE)
    # What is folded is what those threads cost on any look (an init entry that cannot be seeded counts one).
    assert again.folded == summarize_runs(sqlite_runs, AGENT, threads=uncached, cache=False).folded
    assert again.cached == len(FOLDABLE)
    assert store.calls[0] == ("thread_heads", None if every_thread else sorted(READABLE))
    assert sorted(store.calls[1:]) == [("read", thread_id) for thread_id in uncached]
    assert reads == [("keyed", None if every_thread else sorted(READABLE)), ("lookup", uncached)]
    pd.testing.assert_frame_equal(again.to_pandas(), first.to_pandas())


def test_a_gap_written_outside_the_package_is_never_served(sqlite_runs: str) -> None:
    summarize(sqlite_runs)
    with sqlite3.connect(sqlite_runs.removeprefix("sqlite:///")) as conn:
        conn.execute("DELETE FROM agent_event_log WHERE thread_id = 'a-done' AND idx = 2")
    rows = summarize(sqlite_runs)
    assert rows["a-done"].status == "unreadable" and "gap" in (rows["a-done"].error or "")
    assert rows.cached == len(FOLDABLE) - 1


def test_a_last_row_rewritten_outside_the_package_is_refolded(sqlite_runs: str) -> None:
    # The same id and recorded hash, another event: neither the bulk match (another digest) nor a tail read (another
    # content) serves the cached row; the thread folds again and its row says it diverges.
    summarize(sqlite_runs)
    with sqlite3.connect(sqlite_runs.removeprefix("sqlite:///")) as conn:
        (body,) = conn.execute("SELECT body FROM agent_event_log WHERE thread_id = 'a-done' AND idx = 4").fetchone()
        entry = orjson.loads(body)
        entry["event"] = {"type": "REJECT"}
        conn.execute("UPDATE agent_event_log SET body = ? WHERE thread_id = 'a-done' AND idx = 4",
                     (orjson.dumps(entry).decode(),))
    rows = summarize(sqlite_runs)
    assert rows.folded == len(runs()["a-done"][0]) and rows.cached == len(FOLDABLE) - 1
    assert rows["a-done"].verified is False
    pd.testing.assert_frame_equal(rows.to_pandas(), cold(sqlite_runs))


def test_a_thread_stored_as_other_json_text_is_served_after_a_tail_read(tmp_path: Path) -> None:
    # Entries appended as JSON text in another layout (spaces after the colons): the stored digest is never the
    # cache's, so the bulk match leaves the thread to a tail read, which serves it without folding.
    entries = record(machines.agent, [ASK, DONE], "s")
    url = build_sqlite(tmp_path / "text.db", {})
    store = SqliteEventLogStore(tmp_path / "text.db")
    store.sync.append(thread_id="s", expected_index=0, entries=[orjson.dumps(e).decode().replace('":', '": ')
                                                                 for e in entries])
    store.sync.close()
    first = summarize_runs(url, AGENT)
    again = summarize_runs(url, AGENT)
    assert first.folded == len(entries) and again.folded == 0 and again.cached == 1
    pd.testing.assert_frame_equal(again.to_pandas(), first.to_pandas())


@pytest.mark.parametrize(
    "change",
    [
        lambda record: record["carry"].update(first_recorded=5),  # a field out of shape
        lambda record: record["row"].update(verified="yes"),
        lambda record: record["carry"].update(head="00" * 32),  # the payload's key is not the key columns'
        lambda record: record["carry"].update(length=99),
    ],
    ids=["text-field", "verified", "head", "length"],
)
def test_a_signed_record_that_does_not_hold_together_is_never_served(sqlite_runs: str, cache_dir: Path,
                                                                      change: Any) -> None:
    # Signed as the cache signs (its digest checks), yet out of shape or keyed apart from its own columns: the
    # thread is folded again, never served from it.
    summarize(sqlite_runs)
    (path,) = cache_files(cache_dir)
    _rewrite(path, "c-in-flight", change, keep_digest=False)
    rows = summarize(sqlite_runs)
    assert rows.folded == len(runs()["c-in-flight"][0]) and rows.cached == len(FOLDABLE) - 1
    pd.testing.assert_frame_equal(rows.to_pandas(), cold(sqlite_runs))
