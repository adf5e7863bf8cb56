"""`Runs`, the run list widget, over real stores: a SQLite file of triage tickets (samples/triage.py) and the real
PostgreSQL server. What the list shows is checked against what each ticket's fate says it must be, not against
summarize_runs' own output; filters and sorts from Python and from the front end's messages; the selected thread's
Explorer; following a store that another process writes to.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_explorer import Explorer, Runs, SqliteEventLogStore, read_log
from agent_explorer.errors import AgentError
from agent_explorer.samples import support_agent, support_agent_v2
from agent_explorer.samples.shipped import shipped_sample_logs_dir
from agent_explorer.samples.triage import fate_of, triage_thread_id, triage_threads

LOGS = shipped_sample_logs_dir()
WRITER = Path(__file__).with_name("_live_writer.py")
TICKETS = 60
PAGE = 10
GUARD = 60.0  # seconds: a stuck fold or follower fails the test instead of hanging the suite (not a speed goal)
# What each fate's run is under today's support_agent: its status, and whether it verifies.
STATUS = {"finished": "done", "escalated": "done", "waiting": "idle", "crashed": "in-flight", "diverging": "idle"}


def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + GUARD
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def tickets(fate: str | None = None) -> list[str]:
    return [triage_thread_id(n) for n in range(1, TICKETS + 1) if fate is None or fate_of(n).name == fate]


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_EXPLORER_CACHE_DIR", str(tmp_path / "cache"))


async def fill(store: Any, prefix: str = "") -> None:
    for thread_id, entries in triage_threads(LOGS, TICKETS):
        await store.append(thread_id=prefix + thread_id, expected_index=0, entries=entries)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "triage.db"

    async def make() -> None:
        store = SqliteEventLogStore(path)
        try:
            await fill(store)
        finally:
            await store.aclose()

    asyncio.run(make())
    yield path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_first_page_shows_at_once_and_the_rest_folds_into_counts_by_fate(db: Path) -> None:
    before = digest(db)
    runs = Runs(f"sqlite:///{db}", support_agent, page_size=PAGE)
    try:
        # The constructor folded one page before returning: rows to draw, however far the background got.
        first = runs.page
        assert len(first["rows"]) == PAGE and first["total"] >= PAGE
        assert runs.counts["threads"] == TICKETS and runs.counts["folded"] >= PAGE
        assert runs.wait_summarized(GUARD)
        expected: dict[str, int] = {}
        for n in range(1, TICKETS + 1):
            status = STATUS[fate_of(n).name]
            expected[status] = expected.get(status, 0) + 1
        assert {k: v for k, v in runs.counts["counts"].items() if v} == expected
        assert runs.progress == {"done": TICKETS, "total": TICKETS, "folding": False, "following": False,
                                 "error": None}
        assert sorted(runs.shown) == tickets()
        assert len(runs.summaries) == TICKETS and runs.summaries.counts() == runs.counts["counts"]
        # The browser holds one page: never more rows than the page size.
        assert len(runs.page["rows"]) == PAGE and runs.page["total"] == TICKETS
    finally:
        runs.close()
    assert digest(db) == before  # exploring never writes to what it explores


def test_filters_from_python_keep_exactly_the_runs_they_name(db: Path) -> None:
    runs = Runs(f"sqlite:///{db}", support_agent, page_size=PAGE)
    try:
        assert runs.wait_summarized(GUARD)
        runs.sort("thread_id")
        assert runs.filter(status="in-flight").shown == tickets("crashed")
        assert runs.filter(status=["idle", "in-flight"]).shown == sorted(
            tickets("waiting") + tickets("diverging") + tickets("crashed"))
        assert runs.filter(verified=False).shown == tickets("diverging")
        assert runs.filter(state="awaitingApproval").shown == tickets("waiting")
        assert runs.filter(state="#support.awaitingApproval").shown == tickets("waiting")
        assert runs.filter(state="escalated", verified=True).shown == tickets("escalated")
        assert runs.filter(text="TICKET-0001").shown == [triage_thread_id(n) for n in range(10, 20)]
        assert runs.page["filter"] == {"status": [], "state": "", "text": "TICKET-0001", "verified": None}
        assert runs.filter().shown == tickets()
        with pytest.raises(AgentError, match="unknown status"):
            runs.filter(status="finished")
        with pytest.raises(AgentError, match="no state '#nowhere'"):
            runs.filter(state="#nowhere")
    finally:
        runs.close()


def test_a_sort_orders_every_page_and_stays_in_force_across_filters(db: Path) -> None:
    runs = Runs(f"sqlite:///{db}", support_agent, page_size=PAGE)
    try:
        assert runs.wait_summarized(GUARD)
        frame = runs.summaries.to_pandas()
        # Newest first by default, as a postmortem starts.
        assert runs.shown == list(frame.sort_values("last_recorded", ascending=False).index)
        runs.sort("entries", descending=True)
        entries = [int(frame.at[t, "entries"]) for t in runs.shown]
        assert entries == sorted(entries, reverse=True)
        runs.filter(status="done")
        assert [int(frame.at[t, "entries"]) for t in runs.shown] == sorted(
            (int(frame.at[t, "entries"]) for t in frame.index if frame.at[t, "status"] == "done"), reverse=True)
        # The pages, walked, are the list.
        seen: list[str] = []
        offset = 0
        while offset < runs.page["total"]:
            runs._on_message(runs, {"kind": "runs-page", "offset": offset}, [])
            assert len(runs.page["rows"]) <= PAGE
            seen += [row["threadId"] for row in runs.page["rows"]]
            offset += PAGE
        assert seen == runs.shown
    finally:
        runs.close()


def test_the_front_ends_messages_do_what_the_python_calls_do(db: Path) -> None:
    runs = Runs(f"sqlite:///{db}", support_agent, page_size=PAGE)
    try:
        assert runs.wait_summarized(GUARD)
        runs._on_message(runs, {"kind": "runs-sort", "column": "thread_id", "descending": True}, [])
        assert runs.shown == tickets()[::-1]
        assert runs.page["sort"] == {"column": "thread_id", "descending": True}
        runs._on_message(runs, {"kind": "runs-filter", "status": ["in-flight"], "state": "", "text": "",
                                "verified": None}, [])
        assert runs.shown == tickets("crashed")[::-1]
        runs._on_message(runs, {"kind": "runs-filter", "status": [], "state": "#nowhere", "text": "",
                                "verified": None}, [])
        assert "no state '#nowhere'" in runs.selection["error"]  # said in the widget, no traceback
        assert runs.shown == tickets("crashed")[::-1]  # a refused filter leaves the list as it was
        runs._on_message(runs, {"kind": "runs-select", "threadId": tickets("diverging")[0]}, [])
        assert runs.selected == tickets("diverging")[0] and runs.selection["error"] is None
        runs._on_message(runs, {"kind": "runs-sort", "column": "<img>", "descending": True}, [])
        assert "cannot sort by '<img>'" in runs.selection["error"]
    finally:
        runs.close()


def test_selecting_a_run_opens_its_explorer_under_the_list(db: Path) -> None:
    runs = Runs(f"sqlite:///{db}", support_agent, page_size=PAGE, prices={"scripted/large": {"input": 1, "output": 2}})
    try:
        assert runs.selected is None and runs.explorer is None
        diverging = tickets("diverging")[0]
        ex = runs.select(diverging)
        assert isinstance(ex, Explorer) and runs.explorer is ex and runs.selected == diverging
        assert ex.thread_id == diverging and ex.machine is support_agent
        assert ex.verification["status"] == "diverged"
        assert ex.index == 6 and ex.entry["event"]["type"] == "OFFER_REFUND"  # it opens at the first divergence
        assert runs._slot.children == (ex,)  # the box the list is displayed in holds it under the list
        bundle = runs._repr_mimebundle_()
        view = bundle[0] if isinstance(bundle, tuple) else bundle
        assert view["application/vnd.jupyter.widget-view+json"]["model_id"] == runs._box.model_id
        assert runs.selection == {"threadId": diverging, "error": None}
        waiting = runs.select(tickets("waiting")[0])
        assert waiting is not None and waiting.index == 7  # a run that verifies opens where it stands now
        assert runs.select(None) is None and runs._slot.children == () and runs.explorer is None
    finally:
        runs.close()


def test_a_thread_recorded_under_another_version_opens_beside_its_recording_machine(tmp_path: Path) -> None:
    path = tmp_path / "mixed.db"
    v1 = list(read_log(LOGS / "support_bridge_v1.jsonl"))
    v2 = list(read_log(LOGS / "support_bridge_v2.jsonl"))

    async def make() -> None:
        store = SqliteEventLogStore(path)
        try:
            await store.append(thread_id="old", expected_index=0, entries=v1)
            await store.append(thread_id="new", expected_index=0, entries=v2)
        finally:
            await store.aclose()

    asyncio.run(make())
    runs = Runs(f"sqlite:///{path}", support_agent, compare_with=[support_agent_v2])
    try:
        assert runs.wait_summarized(GUARD)
        assert runs.select("old").compare_with is None  # recorded by this machine's version
        ex = runs.select("new")
        assert ex is not None and ex.compare_with is support_agent_v2 and ex.info["compareWith"] == "2"
    finally:
        runs.close()
    plain = Runs(f"sqlite:///{path}", support_agent)
    try:
        ex = plain.select("new")  # no recording machine given: it opens anyway, its divergences shown
        assert ex is not None and ex.compare_with is None
    finally:
        plain.close()


def test_bad_arguments_are_refused_by_name(db: Path) -> None:
    with pytest.raises(AgentError, match="threads must be an iterable"):
        Runs(f"sqlite:///{db}", support_agent, threads="ticket-00001")
    with pytest.raises(AgentError, match="page_size"):
        Runs(f"sqlite:///{db}", support_agent, page_size=0)
    runs = Runs(f"sqlite:///{db}", support_agent, threads=tickets("crashed"))
    try:
        assert runs.wait_summarized(GUARD)
        assert sorted(runs.shown) == tickets("crashed")  # threads= restricts the list (a FleetReport's, say)
        with pytest.raises(AgentError, match="sort by 'colour'"):
            runs.sort("colour")
    finally:
        runs.close()


def _writer(url: str, thread: str, log: Path, start: int) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(WRITER), url, thread, str(log), str(start), "step"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def _step(writer: subprocess.Popen[str]) -> None:
    assert writer.stdin is not None and writer.stdout is not None
    writer.stdin.write("\n")
    writer.stdin.flush()
    assert writer.stdout.readline().strip(), "the writer stopped"


def _follows_another_process(url: str, runs: Runs, prefix: str) -> None:
    """Another process starts a new thread and grows it entry by entry: it appears, then its row keeps up."""
    assert runs.wait_summarized(GUARD)
    until(lambda: runs.following, "following to start")
    thread = f"{prefix}live-{uuid.uuid4().hex[:6]}"
    writer = _writer(url, thread, LOGS / "support_clean.jsonl", 0)
    try:
        for _ in range(4):  # lookup, classify and its usage, ...: the draft is in flight after entry 3
            _step(writer)
        until(lambda: thread in runs.shown, "the new thread to show")
        until(lambda: runs.summaries.get(thread) is not None and runs.summaries[thread].entries == 4,
              "its first four entries")
        assert runs.summaries[thread].status == "in-flight"
        for _ in range(8):
            _step(writer)
        until(lambda: runs.summaries[thread].entries == 12, "the grown thread's row")
        assert runs.summaries[thread].status == "done" and runs.summaries[thread].verified is True
        assert runs.counts["threads"] == TICKETS + 1
    finally:
        assert writer.stdin is not None and writer.stdout is not None
        writer.stdin.close()
        writer.wait(timeout=GUARD)
        writer.stdout.close()


def test_following_a_sqlite_store_shows_new_and_grown_threads(db: Path) -> None:
    url = f"sqlite:///{db}"
    runs = Runs(url, support_agent, follow=True, page_size=PAGE)
    try:
        _follows_another_process(url, runs, "")
        assert runs.progress["following"] is True
    finally:
        runs.close()
    assert not runs._worker.is_alive()  # closing stops the follower


@pytest.mark.postgres
def test_following_a_postgres_store_with_one_listener(tmp_path: Path) -> None:
    dsn = os.environ.get("AGENT_EXPLORER_TEST_PG_DSN")
    if not dsn:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("CI=true but AGENT_EXPLORER_TEST_PG_DSN is not set")
        pytest.skip("no PostgreSQL: set AGENT_EXPLORER_TEST_PG_DSN (scripts/pg_cluster.sh start DIR prints one)")
    from agent_explorer.stores import PostgresEventLogStore, pg_listen

    schema = f"t_{uuid.uuid4().hex[:12]}"  # a schema of its own: the list is every thread of the store
    url = f"{dsn}{'&' if '?' in dsn else '?'}schema={schema}"
    store = PostgresEventLogStore(dsn, schema=schema)
    for thread_id, entries in triage_threads(LOGS, TICKETS):
        store.sync.append(thread_id=thread_id, expected_index=0, entries=entries)
    listeners: list[str] = []
    original = pg_listen.ListenWakeUp.__init__

    def counting(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        listeners.append(self._channel)

    pg_listen.ListenWakeUp.__init__ = counting  # type: ignore[method-assign]
    try:
        runs = Runs(store, support_agent, follow=True, page_size=PAGE)
        try:
            assert runs.counts["threads"] == TICKETS
            _follows_another_process(url, runs, "")
            # One LISTEN for the whole store, on its own channel, however many threads it holds.
            assert listeners == [pg_listen.store_channel_for(store.qualified_table)]
        finally:
            runs.close()
    finally:
        pg_listen.ListenWakeUp.__init__ = original  # type: ignore[method-assign]
        store.sync.close()


@pytest.mark.parametrize("first", ["agent_explorer.runs", "agent_explorer.explorer", "agent_explorer.cli"])
def test_runs_imports_whichever_module_comes_first(first: str) -> None:
    # agent_explorer.runs imports explorer.prices and explorer.search: importing it first (as the CLI's `runs` verb
    # does) must not meet a half-initialised explorer package on its way to the widget.
    code = f"import {first}\nfrom agent_explorer import Runs\nimport agent_explorer.runs\nprint(Runs.__module__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "agent_explorer.explorer.runs", out.stderr


def test_the_list_folds_on_its_own_store_never_reopening_it(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each fold (the first page, the rest, every thread that grows while following) reads through the list's own
    # store: reopening it from its URL per fold cost a new connection pool on PostgreSQL at every wake-up.
    from agent_explorer.fleet import refs

    opened: list[str] = []
    original = refs._open_for_reading

    def counting(url: str, **options: Any) -> Any:
        opened.append(url)
        return original(url, **options)

    monkeypatch.setattr(refs, "_open_for_reading", counting)
    url = f"sqlite:///{db}"
    runs = Runs(url, support_agent, follow=True, page_size=PAGE)
    try:
        assert runs.wait_summarized(GUARD)
        until(lambda: runs.following, "following to start")
        writer = SqliteEventLogStore(db)
        entries = list(read_log(LOGS / "support_clean.jsonl"))[:3]
        writer.sync.append(thread_id="live-own-store", expected_index=0, entries=entries)
        writer.sync.close()
        until(lambda: "live-own-store" in runs.shown, "the new thread to show")
        assert opened == []
    finally:
        runs.close()


def test_the_list_reads_the_thread_ids_in_one_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The SQL stores page list_threads by OFFSET, so pages of 1,000 cost the pages before each: at 100,000 threads
    # the first page of the list took 9 s to show, 1 s in one page.
    path = tmp_path / "many.db"
    store = SqliteEventLogStore(path, synchronous="NORMAL")
    entries = list(read_log(LOGS / "support_clean.jsonl"))[:2]
    store.sync.append(thread_id="t0000", expected_index=0, entries=entries)
    for n in range(1, 1500):
        store.sync.fork(thread_id="t0000", new_thread_id=f"t{n:04d}", up_to_index=2)
    pages: list[int] = []
    listing = SqliteEventLogStore.list_threads

    async def counting(self: SqliteEventLogStore, *, limit: int = 100, offset: int = 0) -> Any:
        pages.append(offset)
        return await listing(self, limit=limit, offset=offset)

    monkeypatch.setattr(SqliteEventLogStore, "list_threads", counting)
    runs = Runs(store, support_agent, page_size=PAGE)
    try:
        assert runs.counts["threads"] == 1500 and pages == [0]
    finally:
        runs.close()
        store.sync.close()
