"""The Explorer widget, Python side: frames per index, two-way cursor, table window, divergence, branches."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest
from ipywidgets.widgets.widget import _remove_buffers
from sample_run import XSS, long_events, make_machine, record, tamper

from agent_explorer import verify_log
from agent_explorer.errors import (
    AgentError,
    AgentInvalidEventPayloadError,
    AgentMachineVersionMismatchError,
)
from agent_explorer.eventlog import timeline as timeline_module
from agent_explorer.explorer import Explorer, bundle, frames, widget
from agent_explorer.explorer import session as session_module
from agent_explorer.explorer.panels import verification as verification_panel
from agent_explorer.explorer.protocol import TRAITS


def synced_state(ex: Explorer) -> dict[str, Any]:
    """What the browser receives: every synced trait of the protocol, and each must be plain JSON."""
    names = set(TRAITS)
    assert names <= set(ex.keys)
    state = {name: getattr(ex, name) for name in sorted(names)}
    # As ipywidgets sends it: bytes go out as binary buffers (only the state track's codes may be bytes), the
    # rest as JSON.
    plain, paths, _buffers = _remove_buffers(state)
    assert paths in ([], [["state_track", "codes"]]), paths
    return json.loads(json.dumps(plain, allow_nan=False))


def test_opens_at_the_init_entry(machine: Any, entries: list[dict[str, Any]]) -> None:
    ex = Explorer(machine, entries)
    assert ex.length == len(entries) == 9 and ex.index == 0
    frame = ex.frame
    assert frame["valueText"] == "idle" and frame["active"] == ["agent", "agent.idle"]
    assert frame["tags"] == ["waiting"] and frame["status"] == "active"
    assert frame["context"]["n"] == 0 and frame["changed"] == []
    assert (
        frame["taken"] == ["#initial"] and "#initial" in ex.graph["edges"]
    )  # the initial arrow lights up
    assert frame["hash"]["ok"] is True
    assert set(ex.graph["nodes"]) >= {
        "agent.idle",
        "agent.working.draft.writing",
        "agent.done",
    }
    assert ex.verification["status"] == "ok"
    assert ex.entry["event"]["type"] == "@agent.init" and ex.snapshot.value == "idle"
    synced_state(ex)


def test_moving_the_index_rebuilds_the_frame(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    ex = Explorer(machine, entries)
    ex.index = 2
    frame = ex.frame
    assert frame["index"] == 2 and frame["entry"]["type"] == "START"
    assert frame["valueText"] == "working.(draft.writing | monitor.ok)"
    assert (
        "agent.working.draft.writing" in frame["active"]
        and "agent.idle" not in frame["active"]
    )
    assert frame["taken"] == ["#agent.idle:on:START:0"]
    assert frame["taken"][0] in ex.graph["edges"], (
        "the taken transition must be drawable"
    )
    assert ex.snapshot.matches({"working": {"draft": "writing"}})
    # entering `writing` arms its 500 ms timer: the host owes that delay until DONE leaves the state
    assert [(e["kind"], e["site"]) for e in frame["effects"]] == [
        ("delay", "xstate.after.500.agent.working.draft.writing")
    ]
    ex.index = 5
    assert ex.frame["effects"] == [] and ex.effects(at=3) == frame["effects"]
    ex.index = 2
    ex.index = 1
    assert ex.frame["changed"] == [["context", "n"], ["context", "notes", 0]]
    assert ex.frame["context"]["notes"] == [
        XSS
    ]  # data stays data; the browser draws it as text
    assert XSS in ex.frame["entry"]["eventText"]


def test_index_is_clamped_into_the_log(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    ex = Explorer(machine, entries)
    ex.index = 10_000
    assert (
        ex.index == 8
        and ex.frame["valueText"] == "done"
        and ex.frame["status"] == "done"
    )
    ex.index = -3
    assert ex.index == 0


def test_usage_is_cumulative_up_to_the_index(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    ex = Explorer(machine, entries)
    ex.index = 2
    assert ex.frame["usage"] == {}
    ex.index = 6
    assert ex.frame["usage"]["totalTokens"] == 160
    assert ex.frame["usage"]["byModel"] == {
        "small": {"inputTokens": 30, "outputTokens": 10, "totalTokens": 40},
        "large": {"inputTokens": 110, "outputTokens": 10, "totalTokens": 120},
    }
    assert ex.usage(at=3) == ex.usage(at=5) and ex.usage_series == [[3, 40], [6, 160]]


def test_table_window_follows_the_cursor_and_answers_page_requests(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    ex = Explorer(machine, entries, page_size=3)
    assert [r["index"] for r in ex.table["rows"]] == [0, 1, 2]
    ex.index = 7
    assert [r["index"] for r in ex.table["rows"]] == [6, 7, 8]
    ex._on_message(
        ex, {"kind": "table", "offset": 0, "limit": 50, "type": "NOTE", "text": ""}, []
    )
    assert [r["index"] for r in ex.table["rows"]] == [1, 7] and ex.table["total"] == 2
    ex._on_message(
        ex,
        {"kind": "table", "offset": 0, "limit": 50, "type": "", "text": "onerror"},
        [],
    )
    assert [r["index"] for r in ex.table["rows"]] == [1]
    assert ex.table["marks"] == [1]  # the filter's hits are marked on the slider track
    ex._on_message(ex, {"kind": "table", "offset": 0, "limit": 50}, [])
    assert ex.table["marks"] == [] and ex.table["total"] == 9
    ex._on_message(
        ex, {"kind": "table", "offset": 0, "limit": 50, "text": "onerror"}, []
    )
    ex._on_message(ex, {"kind": "unknown"}, [])  # ignored, not an error
    assert ex.table["total"] == 1


def test_table_pages_keep_the_cursor_and_end_full(machine: Any) -> None:
    """The table's window is the cursor's page: at the end of a log a full page, and a filter set or cleared
    opens on the cursor's place (not page 0)."""
    from sample_run import long_events, record

    entries = record(machine, long_events(1_000))  # 1,001 entries
    ex = Explorer(machine, entries, page_size=100)
    ex.index = 1_000
    rows = [r["index"] for r in ex.table["rows"]]
    assert ex.table["offset"] == 901 and rows == list(range(901, 1_001))  # the last page ends at the last row
    ex._on_message(ex, {"kind": "table", "offset": 801, "limit": 100, "type": "", "text": ""}, [])  # "previous"
    assert ex.table["offset"] == 800  # back on a page boundary
    ex.index = 555
    assert [r["index"] for r in ex.table["rows"]][0] == 500
    kind = ex.entries[555]["event"]["type"]
    ex._on_message(ex, {"kind": "table", "offset": 0, "limit": 100, "type": kind, "text": ""}, [])
    filtered = [r["index"] for r in ex.table["rows"]]
    assert 555 in filtered and ex.table["total"] < 1_001  # a new filter opens on the cursor's row
    ex._on_message(ex, {"kind": "table", "offset": 0, "limit": 100, "type": "", "text": ""}, [])  # cleared
    assert ex.table["offset"] == 500 and 555 in [r["index"] for r in ex.table["rows"]]
    ex._on_message(ex, {"kind": "table", "offset": 0, "limit": 100, "type": "", "text": "no such text"}, [])
    assert ex.table["total"] == 0 and ex.table["rows"] == [] and ex.table["query"]["text"] == "no such text"
    ex._on_message(ex, {"kind": "table", "offset": 0, "limit": 100, "type": "", "text": ""}, [])
    assert ex.table["offset"] == 500  # clearing an empty result comes back to the cursor too
    ex.search("hello")  # a plain text search filters the table on the cursor's place as well
    hello = [r["index"] for r in ex.table["rows"]]
    after = next(i for i in range(555, 1_001) if ex.entries[i]["event"].get("text") == "hello")
    assert after in hello and all(ex.entries[i]["event"].get("text") == "hello" for i in hello)


def test_tampered_log_reports_the_first_divergence(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    bad = tamper(entries, 4, type="NOTE", text="edited")
    ex = Explorer(machine, bad)
    v = ex.verification
    assert (
        v["status"] == "diverged"
        and v["first"] == 4
        and v["count"] == 5
        and v["ranges"] == [[4, 8]]
    )
    assert v["detail"]["eventId"] == "e4" and v["detail"]["event"]["type"] == "NOTE"
    assert (
        v["detail"]["expectedHash"]
        == bad[4]["verification"]["stateHash"]
        != v["detail"]["actualHash"]
    )
    assert ex.first_divergence == 4
    assert {r["index"]: r["divergent"] for r in ex.table["rows"]}[4] is True
    ex.index = 4
    assert ex.frame["hash"]["ok"] is False


def test_compare_with_an_other_machine_shows_where_they_part(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    bad = tamper(entries, 4, type="NOTE", text="edited")
    ex = Explorer(machine, bad, compare_with=make_machine("2", step=2))
    machines = ex.verification["machines"]
    assert machines["index"] == 1
    assert {tuple(c["path"]) for c in machines["diff"]} == {("context", "n")}
    # in the notebook's direction, compare_machines(recorder, today): before is the recording's, after the replay's
    assert machines["diff"][0]["before"] == 2 and machines["diff"][0]["after"] == 1
    assert machines["before"].startswith("recording") and machines["after"].startswith("replay")


def test_background_verification_lands_later(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    ex = Explorer(
        machine, tamper(entries, 2, type="NOTE", text="y"), verify="background"
    )
    assert ex.wait_verified(timeout=30)["status"] == "diverged"
    assert ex.verification["first"] == 2
    off = Explorer(machine, entries, verify=False)
    assert off.verification["status"] == "off"


def test_long_log_opens_lazily_and_builds_in_the_background(
    machine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(widget, "SYNC_VERIFY_LIMIT", 50)
    monkeypatch.setattr(timeline_module, "BUILD_CHUNK", 64)
    log = record(machine, long_events(400))
    ex = Explorer(machine, log)
    assert ex.verification["status"] in ("pending", "ok")
    ex.index = 399  # answered at once, or (fold still behind) as a pending frame delivered later
    assert ex.frame["index"] == 399
    assert ex.wait_verified(timeout=60)["status"] == "ok"
    assert ex.line.timeline.built == len(log)
    assert ex.verification["checked"] == len(log)  # the one background fold verified every entry
    assert "pending" not in ex.frame and ex.frame["hash"]["ok"] is True
    # owed effects come from the same fold's ledger at any index (tests/explorer/test_pending.py)
    assert ex.frame["effects"] == ex.effects(at=399)


def test_an_index_past_the_background_fold_is_answered_when_the_fold_gets_there(
    machine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A drag to the end of a long log right after opening must not block the kernel on the fold."""
    monkeypatch.setattr(widget, "SYNC_VERIFY_LIMIT", 50)
    monkeypatch.setattr(timeline_module, "BUILD_CHUNK", 50)
    gate = threading.Event()
    stalled = threading.Event()  # the fold has reached 150: everything below is folded (no race with a slow thread)
    real_open = widget.open_line

    def gated_open(machine: Any, entries: Any, **options: Any) -> Any:
        timeline = real_open(machine, entries, **options)
        real_build = timeline.build

        def build(until: int | None = None, *, progress: Any = None) -> int:
            def stalling(built: int, total: int) -> None:
                if built > 150:
                    stalled.set()
                    gate.wait(30)  # the fold stalls at 150 until the test lets it go on
                if progress is not None:
                    progress(built, total)

            return int(real_build(until, progress=stalling))

        timeline.build = build
        return timeline

    monkeypatch.setattr(widget, "open_line", gated_open)
    log = record(machine, long_events(300))
    ex = Explorer(machine, log, verify=False)
    ex.index = 290
    frame = ex.frame
    assert frame["pending"] is True and frame["index"] == 290 and frame["built"] <= 151
    assert frame["entry"]["index"] == 290
    assert stalled.wait(30)
    ex.index = (
        20  # already folded: answered at once, and the deferred request is dropped
    )
    assert ex.frame["index"] == 20 and "pending" not in ex.frame
    ex.index = 280
    assert ex.frame["pending"] is True
    gate.set()
    ex.wait_verified(timeout=30)
    assert (
        ex.frame["index"] == 280
        and "pending" not in ex.frame
        and ex.frame["hash"]["ok"] is True
    )
    assert (
        ex.frame["usage"]["totalTokens"] == 30 * 56 and ex.table_types[0][0] == "TICK"
    )


async def test_in_a_running_loop_only_the_newest_index_is_built(
    machine: Any, entries: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    ex = Explorer(machine, entries)
    built: list[int] = []
    real = frames.FrameBuilder.build
    monkeypatch.setattr(frames.FrameBuilder, "build", lambda self, i: built.append(i) or real(self, i))
    for i in (1, 2, 3, 4, 5):  # a burst of slider messages, applied as ipywidgets applies browser state
        ex.set_state({"index": i})
    assert built == [] and ex.frame["index"] == 0
    await asyncio.sleep(0)
    assert built == [5] and ex.frame["index"] == 5


async def test_in_a_running_loop_an_index_set_from_python_is_current_at_once(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    # A notebook cell (`ex.index = 3`) reads the frame, or saves widget state, before the loop turns.
    ex = Explorer(machine, entries)
    ex.index = 3
    assert ex.frame["index"] == 3 and ex.snapshot is not None


def test_fork_append_compare(machine: Any, entries: list[dict[str, Any]]) -> None:
    ex = Explorer(machine, entries)
    branch = ex.fork(at=5)
    assert (
        len(branch) == 5 and branch.entries == entries[:5] and ex.lineage["forks"] == [4]
    )
    moved = branch.append({"type": "CANCEL"})
    assert not moved.ignored and moved.value == "idle" and moved.index == 5
    assert moved.entry["verification"]["stateHash"] == moved.state_hash
    ignored = branch.append({"type": "APPROVE"})
    assert ignored.ignored and "ignored in state 'idle'" in ignored.message
    assert len(branch) == 7 and len(ex) == 9, "the parent log is untouched"
    assert verify_log(machine, branch.entries).ok
    result = ex.compare(branch)
    assert result.index == 5 and result.forked_at == 5
    assert ("value",) in {tuple(c["path"]) for c in result.diff}
    assert (
        ex.comparison["index"] == 5
        and ex.comparison["branch"]["appended"][-1]["ignored"] is True
    )
    same = ex.fork(at=9)
    assert ex.compare(same).index is None


@pytest.mark.parametrize(
    "event",
    [{"type": "@agent.init"}, {"type": 3}, {"text": "no type"}, "START", {"type": ""}],
    ids=["reserved", "non-string", "missing", "not-a-dict", "empty"],
)
def test_append_refuses_bad_events(
    machine: Any, entries: list[dict[str, Any]], event: Any
) -> None:
    branch = Explorer(machine, entries).fork(at=3)
    with pytest.raises(AgentInvalidEventPayloadError):
        branch.append(event)
    assert len(branch) == 3


def test_fork_index_must_keep_the_init_entry(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    ex = Explorer(machine, entries)
    for at in (0, 10, -1):
        with pytest.raises(AgentError) as caught:
            ex.fork(at=at)
        assert caught.value.code == "invalid-fork-index"


def test_empty_log_is_refused(machine: Any) -> None:
    with pytest.raises(AgentError) as caught:
        Explorer(machine, [])
    assert caught.value.code == "empty-log"


def _store() -> Any:
    from agent_explorer.stores import create_in_memory_event_log_store

    return create_in_memory_event_log_store()


def _load(store: Any, thread: str, entries: list[dict[str, Any]]) -> None:
    asyncio.run(store.append(thread_id=thread, expected_index=0, entries=entries))


def test_from_store_forks_in_memory_until_saved(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    store = _store()
    _load(store, "t1", entries)
    ex = Explorer.from_store(store, "t1", machine)
    assert len(ex) == 9 and ex.info["threadId"] == "t1"
    threads = asyncio.run(store.list_threads())
    branch = ex.fork(at=3, name="what-if")
    branch.append({"type": "CANCEL"})
    ex.compose({"type": "NOTE", "text": "composed"}, at=1)
    assert asyncio.run(store.list_threads()) == threads, "exploring never writes to the store"
    assert branch.save(thread_id="t1-what-if") == "t1-what-if" and branch.thread_id == "t1-what-if"
    stored = asyncio.run(store.read("t1-what-if"))
    assert [e["event"]["type"] for e in stored] == [
        "@agent.init",
        "NOTE",
        "START",
        "CANCEL",
    ]
    assert asyncio.run(store.length("t1")) == 9


async def test_from_store_inside_a_running_event_loop(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    """A notebook cell runs inside the kernel's loop: from_store must not call asyncio.run on it."""
    store = _store()
    await store.append(thread_id="t2", expected_index=0, entries=entries)
    ex = Explorer.from_store(store, "t2", machine)
    assert len(ex) == 9 and ex.frame["index"] == 0
    with pytest.raises(AgentError) as caught:
        Explorer.from_store(store, "missing", machine)
    assert caught.value.code == "thread-not-found"


def test_search_marks_hits_and_filters_the_table(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    ex = Explorer(machine, entries)
    assert ex.search("NOTE") == [1, 7]
    assert ex.search_results["marks"] == [1, 7] and [r["index"] for r in ex.table["rows"]] == [
        1,
        7,
    ]
    assert ex.search("req-", type="@agent.usage") == [3, 6]
    assert ex.search("no such text") == [] and ex.search_results["marks"] == []


def test_machines_are_compared_even_without_verification(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    ex = Explorer(
        machine, entries, compare_with=make_machine("2", step=2), verify=False
    )
    assert (
        ex.verification["status"] == "off" and ex.verification["machines"]["index"] == 1
    )
    branch = ex.fork(at=3)
    assert ex.branches() == [branch]


def test_a_log_from_another_machine_version(entries: list[dict[str, Any]]) -> None:
    today = make_machine("2", step=2)
    with pytest.raises(AgentMachineVersionMismatchError) as caught:
        Explorer(today, entries)
    assert "check_version=False" in caught.value.message
    ex = Explorer(today, entries, check_version=False)
    assert ex.verification["status"] == "diverged" and ex.verification["first"] == 1
    ex.index = 1
    assert ex.frame["context"]["n"] == 2 and ex.frame["hash"]["ok"] is False
    # a what-if branch of that log grows under today's machine too
    branch = ex.fork(at=2)
    assert (
        branch.append({"type": "NOTE", "text": "today"}).entry["machineVersion"] == "2"
    )


def test_background_verification_reports_progress(
    machine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(widget, "SYNC_VERIFY_LIMIT", 50)
    monkeypatch.setattr(timeline_module, "BUILD_CHUNK", 10)
    moments = iter([0.0, 0.1, 0.7, 0.8, 1.4, 1.5, 2.1, 2.2] + [99.0] * 100)
    monkeypatch.setattr(verification_panel.time, "monotonic", lambda: next(moments))
    published: list[float] = []
    log = record(machine, long_events(50))
    ex = Explorer.__new__(Explorer)
    ex.observe(lambda change: published.append(change["new"].get("progress")), "verification")
    Explorer.__init__(ex, machine, log)
    assert ex.wait_verified(timeout=30)["status"] == "ok"
    progress = [p for p in published if p is not None]
    # the chip shows the fold's share at most every 0.5 s: 5 chunks folded, fewer reports, always growing
    assert progress and len(progress) < 5 and progress == sorted(progress) and all(0 < p <= 1 for p in progress)


async def test_from_a_sqlite_store_inside_a_running_loop(
    machine: Any, entries: list[dict[str, Any]], tmp_path: Any
) -> None:
    """The embedded default store, a real file, read and forked from notebook-style code in a live loop."""
    from agent_explorer.stores import SqliteEventLogStore

    store = SqliteEventLogStore(str(tmp_path / "runs.db"))
    try:
        await store.append(thread_id="s1", expected_index=0, entries=entries)
        ex = Explorer.from_store(store, "s1", machine)
        assert len(ex) == 9 and ex.verification["status"] == "ok"
        branch = ex.fork(at=3)
        assert branch.append({"type": "CANCEL"}).value == "idle"
        assert [t.thread_id for t in await store.list_threads()] == ["s1"]  # nothing written by exploring
        assert branch.save(thread_id="s1-b") == "s1-b"
        stored = await store.read("s1-b")
        assert [e["event"]["type"] for e in stored][
            -1
        ] == "CANCEL" and await store.length("s1") == 9
    finally:
        close = getattr(store, "aclose", None)
        if close is not None:
            await close()


def test_a_missing_bundle_renders_a_clear_message(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setattr(bundle, "STATIC_DIR", tmp_path)
    esm = bundle.esm()
    assert (
        isinstance(esm, str)
        and "npm ci && npm run build" in esm
        and bundle.css() == ""
    )
    assert (bundle.Path(bundle.__file__).parent / "static" / "widget.js").exists(), (
        "build the bundle: npm run build"
    )


def test_a_failing_background_fold_is_reported_not_raised_in_the_thread(
    machine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(widget, "SYNC_VERIFY_LIMIT", 50)
    monkeypatch.setattr(timeline_module, "BUILD_CHUNK", 50)
    real_open = widget.open_line

    def broken_open(machine: Any, entries: Any, **options: Any) -> Any:
        timeline = real_open(machine, entries, **options)

        def build(until: int | None = None, *, progress: Any = None) -> int:
            raise OSError("disk on fire")

        timeline.build = build
        return timeline

    monkeypatch.setattr(widget, "open_line", broken_open)
    ex = Explorer(machine, record(machine, long_events(200)))
    payload = ex.wait_verified(timeout=30)
    assert payload["status"] == "error" and "disk on fire" in payload["message"]
    ex.index = 3  # the view says what broke instead of going blank
    assert ex.frame["index"] == 3 and "disk on fire" in ex.frame["error"]


def test_branch_append_parses_with_the_machine_schemas() -> None:
    """On an agent machine with pydantic event schemas, appends go through parse_agent_event."""
    from pathlib import Path

    from agent_explorer import read_log
    from agent_explorer.samples import support_agent

    log = list(
        read_log(Path(__file__).parents[2] / "sample_logs" / "support_clean.jsonl")
    )
    branch = Explorer(support_agent, log).fork(
        at=8
    )  # just before the reviewer's APPROVE
    with pytest.raises(AgentInvalidEventPayloadError) as caught:
        branch.append({"type": "APPROVE"})
    assert "approver" in caught.value.message and len(branch) == 8
    approved = branch.append({"type": "APPROVE", "approver": "kim"})
    assert approved.entry["event"] == {
        "type": "APPROVE",
        "approver": "kim",
        "note": "",
    }  # defaults filled
    assert approved.value == "refunding" and not approved.ignored
    again = branch.append({"type": "APPROVE", "approver": "kim"})
    assert again.ignored and "ignored in state 'refunding'" in again.message


def test_repr_is_one_line(machine: Any, entries: list[dict[str, Any]]) -> None:
    ex = Explorer(machine, entries)
    ex.index = 4
    assert (
        repr(ex)
        == "Explorer(machine='agent' v1, entries=9, index=4, line='recording', verification='ok')"
    )


@pytest.mark.postgres
async def test_from_a_postgres_store_inside_a_running_loop(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    """The shared store: read, fork and append from notebook-style code while the caller's loop runs."""
    import os
    import uuid

    dsn = os.environ.get("AGENT_EXPLORER_TEST_PG_DSN")
    if not dsn:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("CI=true but AGENT_EXPLORER_TEST_PG_DSN is not set")
        pytest.skip(
            "no PostgreSQL: set AGENT_EXPLORER_TEST_PG_DSN (scripts/pg_cluster.sh start DIR prints one)"
        )
    from agent_explorer.stores import PostgresEventLogStore

    thread = f"explorer-{uuid.uuid4().hex[:8]}"
    store = PostgresEventLogStore(dsn)
    try:
        await store.append(thread_id=thread, expected_index=0, entries=entries)
        ex = Explorer.from_store(store, thread, machine)
        assert (
            len(ex) == 9
            and ex.verification["status"] == "ok"
            and ex.info["threadId"] == thread
        )
        branch = ex.fork(at=3)
        assert branch.append({"type": "CANCEL"}).value == "idle"
        assert await store.length(f"{thread}-b") == 0  # in memory until saved
        branch.save(thread_id=f"{thread}-b")
        assert [e["event"]["type"] for e in await store.read(f"{thread}-b")][
            -1
        ] == "CANCEL"
        assert await store.length(thread) == 9
    finally:
        close = getattr(store, "aclose", None)
        if close is not None:
            await close()


class _Stall:
    """A background fold held at a point: `reached` once it got there, `set()` lets it go on."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.gate = threading.Event()

    def set(self) -> None:
        self.gate.set()


def _stalled_fold(monkeypatch: pytest.MonkeyPatch, at: int = 100) -> _Stall:
    """A long-log path whose background fold stops once it has folded `at` entries, until the stall is `set()`."""
    monkeypatch.setattr(widget, "SYNC_VERIFY_LIMIT", 50)
    monkeypatch.setattr(timeline_module, "BUILD_CHUNK", 50)
    stall = _Stall()
    real_progress = session_module.Session._folded

    def progress(self: Any, done: int, total: int) -> None:
        if done >= at:
            stall.reached.set()
            stall.gate.wait(30)
        real_progress(self, done, total)

    monkeypatch.setattr(session_module.Session, "_folded", progress)
    return stall


def test_verify_true_verifies_a_long_log_before_returning(
    machine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """verify=True is the synchronous mode whatever the length ("auto" is the one that goes by the length)."""
    monkeypatch.setattr(widget, "SYNC_VERIFY_LIMIT", 50)
    log = record(machine, long_events(200))
    ex = Explorer(machine, log, verify=True)
    assert ex._session.folder is None and ex.line.timeline.built == len(log)
    assert ex.verification["status"] == "ok" and ex.verification["checked"] == len(log)
    auto = Explorer(machine, log)
    assert auto._session.folder is not None
    assert auto.wait_verified(timeout=30)["status"] == "ok"


def test_the_recording_checked_out_after_its_fold_ended_shows_the_final_verification(
    machine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Leaving the recording while its fold runs, then coming back once it ended, shows what the fold found (not
    the "pending" it showed on leaving); the recording's machine comparison is never shown on a branch."""
    gate = _stalled_fold(monkeypatch)
    log = record(machine, long_events(300))
    ex = Explorer(machine, log, compare_with=make_machine("2", step=2))
    assert ex.verification["status"] == "pending"
    assert gate.reached.wait(30)  # the fold is at 100 (the fork below takes over its first entries, verified)
    branch = ex.fork(at=5)
    ex.checkout(branch)
    assert ex.verification["status"] == "ok" and ex.verification["machines"] is None
    gate.set()
    ex.wait_verified(timeout=60)
    # the fold ended with the branch on view: the branch's chip is untouched, with no machine comparison
    assert ex.verification["status"] == "ok" and ex.verification["entries"] == 5
    assert ex.verification["machines"] is None
    ex.checkout()
    assert ex.verification["status"] == "ok" and ex.verification["checked"] == len(log)
    assert ex.verification["machines"]["index"] == 1
    ex.checkout(branch)
    assert ex.verification["machines"] is None


def test_the_recording_checked_out_again_during_its_fold_keeps_the_fold_off_the_kernel(
    machine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Back on the recording while the worker still folds, an index past the fold is a pending frame (drawn when
    the fold gets there), not a fold of the rest on the kernel thread."""
    gate = _stalled_fold(monkeypatch)
    log = record(machine, long_events(300))
    ex = Explorer(machine, log)
    assert gate.reached.wait(30)  # the fold is at 100
    ex.checkout(ex.fork(at=5))
    ex.checkout()  # at the recording's last index, far past the stalled fold
    assert ex.index == len(log) - 1 and ex.frame.get("pending") is True
    assert ex.line.timeline.built < len(log)
    gate.set()
    ex.wait_verified(timeout=60)
    assert ex.frame["index"] == len(log) - 1 and "pending" not in ex.frame and ex.frame["hash"]["ok"] is True


def test_the_same_divergent_set_again_redraws_nothing(
    machine: Any, entries: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    pages: list[int] = []
    real_page = widget.TablePanel.show_page
    monkeypatch.setattr(widget.TablePanel, "show_page",
                        lambda self, offset, *a, **k: pages.append(offset) or real_page(self, offset, *a, **k))
    Explorer(machine, entries, compare_with=make_machine("2", step=2))
    assert len(pages) == 1  # the first page, once: a clean log's divergent set never changes
    ex = Explorer(machine, tamper(entries, 4, type="NOTE", text="edited"), compare_with=make_machine("2", step=2))
    ex.index = 4
    built: list[int] = []
    real_build = frames.FrameBuilder.build
    monkeypatch.setattr(frames.FrameBuilder, "build", lambda self, i: built.append(i) or real_build(self, i))
    pages.clear()
    ex._verification.show_line(ex.line)  # the same summary again
    assert pages == [] and built == []
    assert ex.table["rows"][4]["divergent"] is True and ex.frame["hash"]["ok"] is False


def test_entries_a_followed_run_appends_during_the_background_fold_are_folded_by_it(
    machine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = _stalled_fold(monkeypatch)
    log = record(machine, long_events(320))
    ex = Explorer(machine, log[:301])
    ex._session.follower._grow(log[301:])  # a batch from the followed thread (the follower folds it), while the fold is at 100
    assert len(ex.line.timeline) == len(log) and ex.line.timeline.built < 301
    gate.set()
    assert ex.wait_verified(timeout=60)["status"] == "ok"
    assert ex.line.timeline.built == len(log) and ex.verification["checked"] == len(log)
