"""Following a live run: the explorer grows with the thread as a host appends to it (real writers: another
thread, another process on a SQLite file), in a plain program and inside a running event loop alike."""

from __future__ import annotations

import asyncio
import copy
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_explorer import Explorer, SqliteEventLogStore, create_in_memory_event_log_store, read_log
from agent_explorer.explorer import follower as live_panel
from agent_explorer.samples import support_agent

LOGS = Path(__file__).parents[2] / "sample_logs"
WRITER = Path(__file__).with_name("_live_writer.py")
GUARD = 60.0  # seconds: a stuck follower fails the test instead of hanging the suite (not a speed goal)


def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + GUARD
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def clean() -> list[dict[str, Any]]:
    return list(read_log(LOGS / "support_clean.jsonl"))


def test_the_cursor_stays_at_the_tail_and_verification_grows() -> None:
    entries = clean()
    store = create_in_memory_event_log_store()
    store.sync.append(thread_id="live", expected_index=0, entries=entries[:3])
    ex = Explorer.from_store(store, "live", support_agent, follow=True)
    assert ex.following and ex.live["following"] is True and len(ex) == 3
    assert ex.index == 2 and ex.frame["index"] == 2  # a live run opens where it is now: at the tail
    for i in range(3, 8):  # the host appends from another thread, entry by entry
        threading.Thread(target=store.sync.append,
                         kwargs={"thread_id": "live", "expected_index": i, "entries": [entries[i]]}).start()
        until(lambda i=i: len(ex) == i + 1, f"entry {i}")
    until(lambda: ex.index == 7, "the cursor at the new tail")
    assert ex.length == 8 and ex.frame["index"] == 7 and ex.frame["valueText"] == "awaitingApproval"
    assert ex.verification["status"] == "ok" and ex.verification["checked"] == 8  # grown, not refolded
    assert ex.live["lastRecordedAt"] == entries[7]["recordedAt"] and ex.live["newEntries"] == 0
    assert ex.usage()["totalTokens"] == sum(e["event"]["usage"]["totalTokens"] for e in entries[:8]
                                            if e["event"]["type"] == "@agent.usage")
    ex.follow(False)
    assert not ex.following and ex.live["following"] is False


def test_away_from_the_tail_the_cursor_stays_and_new_entries_are_offered() -> None:
    entries = clean()
    store = create_in_memory_event_log_store()
    store.sync.append(thread_id="live", expected_index=0, entries=entries[:4])
    ex = Explorer.from_store(store, "live", support_agent, follow=True)
    ex.index = 1
    store.sync.append(thread_id="live", expected_index=4, entries=entries[4:6])
    until(lambda: ex.live.get("newEntries") == 2, "the new-entries marker")
    assert ex.index == 1 and ex.frame["index"] == 1 and ex.length == 6
    ex._on_message(ex, {"kind": "jump-to-tail"}, [])
    assert ex.index == 5 and ex.live["newEntries"] == 0
    ex.follow(False)


def test_the_event_table_rides_the_tail_with_the_cursor() -> None:
    # Pages of 4 over a log that grows one entry at a time: the table's last page starts off a page boundary,
    # and redrawing it after a batch used to re-align it one page back, leaving the cursor's row off the table.
    entries = clean()
    store = create_in_memory_event_log_store()
    store.sync.append(thread_id="live", expected_index=0, entries=entries[:2])
    ex = Explorer.from_store(store, "live", support_agent, follow=True, page_size=4)

    def on_table() -> list[int]:
        return [row["index"] for row in ex.table["rows"]]

    try:
        for i in range(2, len(entries)):
            store.sync.append(thread_id="live", expected_index=i, entries=[entries[i]])
            until(lambda i=i: ex.index == i and ex.frame["index"] == i, f"the cursor at {i}")
            deadline = time.monotonic() + 5
            while i not in on_table() and time.monotonic() < deadline:
                time.sleep(0.01)
            assert i in on_table(), f"cursor at {i}, the table on rows {on_table()}"
            assert ex.table["total"] == i + 1 and on_table()[-1] == i
    finally:
        ex.follow(False)


def test_a_divergent_entry_arriving_live_shows_at_once() -> None:
    entries = copy.deepcopy(clean())
    entries[6]["verification"]["stateHash"] = "0" * 64  # the host journaled a state the machine does not derive
    store = create_in_memory_event_log_store()
    store.sync.append(thread_id="live", expected_index=0, entries=entries[:6])
    ex = Explorer.from_store(store, "live", support_agent, follow=True)
    assert ex.first_divergence is None
    store.sync.append(thread_id="live", expected_index=6, entries=entries[6:8])
    until(lambda: ex.first_divergence == 6, "the divergence")
    assert ex.verification["status"] == "diverged" and [6, 6] in ex.verification["ranges"]
    assert ex.table["rows"][6]["divergent"] is True
    ex.follow(False)


def test_following_again_catches_up_on_what_arrived_meanwhile() -> None:
    entries = clean()
    store = create_in_memory_event_log_store()
    store.sync.append(thread_id="live", expected_index=0, entries=entries[:3])
    ex = Explorer.from_store(store, "live", support_agent, follow=True)
    ex.follow(False)
    store.sync.append(thread_id="live", expected_index=3, entries=entries[3:9])
    assert len(ex) == 3  # not following: nothing moved
    ex.follow()
    until(lambda: len(ex) == 9, "the catch-up")
    store.sync.append(thread_id="live", expected_index=9, entries=entries[9:])
    until(lambda: len(ex) == len(entries), "the rest")
    assert [e["id"] for e in ex.entries] == [e["id"] for e in entries]  # in order, once each
    ex.follow(False)


def test_a_fork_and_a_sibling_thread_never_appear_on_the_followed_line() -> None:
    entries = clean()
    store = create_in_memory_event_log_store()
    store.sync.append(thread_id="live", expected_index=0, entries=entries[:4])
    ex = Explorer.from_store(store, "live", support_agent, follow=True)
    store.sync.fork(thread_id="live", new_thread_id="live-fork", up_to_index=4)
    store.sync.append(thread_id="live-fork", expected_index=4, entries=entries[4:7])
    store.sync.append(thread_id="other", expected_index=0, entries=entries[:5])
    store.sync.append(thread_id="live", expected_index=4, entries=[entries[4]])
    until(lambda: len(ex) == 5, "the followed thread's own append")
    time.sleep(0.2)
    assert len(ex) == 5 and [e["id"] for e in ex.entries] == [e["id"] for e in entries[:5]]
    ex.follow(False)


async def test_following_inside_a_running_event_loop() -> None:
    """A notebook cell runs inside the kernel's loop: following must not need (or block) that loop."""
    entries = clean()
    store = create_in_memory_event_log_store()
    await store.append(thread_id="live", expected_index=0, entries=entries[:2])
    ex = Explorer.from_store(store, "live", support_agent, follow=True)
    ex.index = 1
    await store.append(thread_id="live", expected_index=2, entries=entries[2:5])
    deadline = time.monotonic() + GUARD
    while len(ex) < 5:
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)
    assert ex.index == 4 and ex.following
    ex.follow(False)


def test_a_writer_process_on_a_sqlite_file(tmp_path: Path) -> None:
    entries = clean()
    path = tmp_path / "live.db"
    log = tmp_path / "run.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    store = SqliteEventLogStore(path)
    store.sync.append(thread_id="t", expected_index=0, entries=entries[:1])
    ex = Explorer.from_store(store, "t", support_agent, follow=True)
    writer = subprocess.Popen([sys.executable, str(WRITER), f"sqlite:///{path}", "t", str(log), "1", "0.05"],
                              stdout=subprocess.DEVNULL)
    try:
        until(lambda: len(ex) == len(entries), "every entry of the writer process")
        assert writer.wait(GUARD) == 0
        until(lambda: ex.index == len(entries) - 1, "the cursor at the tail")
        assert ex.verification["status"] == "ok" and ex.verification["checked"] == len(entries)
        assert ex.frame["valueText"] == "resolved"
    finally:
        writer.kill()
        ex.follow(False)
        store.sync.close()


def _drawn(ex: Explorer, seq: int) -> None:
    """What the front end sends once it drew refresh `seq` of a followed run (header.js)."""
    ex._on_message(ex, {"kind": "live-drawn", "seq": seq}, [])


def test_a_front_end_that_acknowledges_gets_at_most_two_refreshes_to_draw(monkeypatch: Any) -> None:
    """Flow control: batches are folded at once; the views refresh when the browser has drawn (an acknowledgement),
    so a writer faster than the browser merges batches into the next refresh instead of queueing them."""
    monkeypatch.setattr(live_panel, "ACK_TIMEOUT", 60.0)  # no acknowledgement is ever late in this test
    entries = clean()
    store = create_in_memory_event_log_store()
    store.sync.append(thread_id="live", expected_index=0, entries=entries[:3])
    ex = Explorer.from_store(store, "live", support_agent, follow=True)
    store.sync.append(thread_id="live", expected_index=3, entries=[entries[3]])
    until(lambda: ex.live["seq"] == 1 and ex.length == 4, "the first refresh (no front end has answered yet)")
    _drawn(ex, 1)  # a view drew it: from now on it is waited for
    until(lambda: ex._session.follower._acking, "the acknowledgement")
    for i in (4, 5, 6, 7):
        store.sync.append(thread_id="live", expected_index=i, entries=[entries[i]])
        until(lambda i=i: len(ex) == i + 1, f"entry {i} folded")
    until(lambda: ex.live["seq"] == 3, "two refreshes in flight")
    assert len(ex) == 8 and ex.length == 6 and ex.index == 5  # folded; the views wait for the browser
    assert ex.usage()["totalTokens"] == sum(e["event"]["usage"]["totalTokens"] for e in entries[:8]
                                            if e["event"]["type"] == "@agent.usage")  # the fold has it all
    _drawn(ex, "3")  # not an acknowledgement: ignored
    _drawn(ex, 3)
    until(lambda: ex.live["seq"] == 4, "the refresh the acknowledgement let go")
    assert ex.length == 8 and ex.index == 7 and ex.verification["checked"] == 8  # every batch, in one refresh
    ex.follow(False)


def test_a_divergence_is_shown_at_once_even_while_the_front_end_is_behind(monkeypatch: Any) -> None:
    monkeypatch.setattr(live_panel, "ACK_TIMEOUT", 60.0)
    entries = copy.deepcopy(clean())
    entries[7]["verification"]["stateHash"] = "0" * 64
    store = create_in_memory_event_log_store()
    store.sync.append(thread_id="live", expected_index=0, entries=entries[:3])
    ex = Explorer.from_store(store, "live", support_agent, follow=True)
    store.sync.append(thread_id="live", expected_index=3, entries=[entries[3]])
    until(lambda: ex.live["seq"] == 1, "the first refresh")
    _drawn(ex, 1)
    until(lambda: ex._session.follower._acking, "the acknowledgement")
    for i in (4, 5, 6):
        store.sync.append(thread_id="live", expected_index=i, entries=[entries[i]])
        until(lambda i=i: len(ex) == i + 1, f"entry {i} folded")
    until(lambda: ex.live["seq"] == 3, "two refreshes in flight")
    assert ex.length == 6
    store.sync.append(thread_id="live", expected_index=7, entries=[entries[7]])
    until(lambda: ex.first_divergence == 7, "the divergence, without waiting for the browser")
    assert ex.length == 8 and ex.verification["status"] == "diverged" and [7, 7] in ex.verification["ranges"]
    ex.follow(False)


def test_refreshes_nobody_acknowledges_still_go_and_stopping_shows_everything(monkeypatch: Any) -> None:
    """A view closed (or a kernel busy in a cell) acknowledges nothing: a refresh then counts as drawn after
    ACK_TIMEOUT, so the views keep up; follow(False) shows all that was folded."""
    monkeypatch.setattr(live_panel, "ACK_TIMEOUT", 0.05)
    entries = clean()
    store = create_in_memory_event_log_store()
    store.sync.append(thread_id="live", expected_index=0, entries=entries[:3])
    ex = Explorer.from_store(store, "live", support_agent, follow=True)
    store.sync.append(thread_id="live", expected_index=3, entries=[entries[3]])
    until(lambda: ex.live["seq"] == 1, "the first refresh")
    _drawn(ex, 1)
    until(lambda: ex._session.follower._acking, "the acknowledgement")
    for i in range(4, 9):
        store.sync.append(thread_id="live", expected_index=i, entries=[entries[i]])
    until(lambda: ex.length == 9 and ex.index == 8, "the views, with nobody acknowledging")
    monkeypatch.setattr(live_panel, "ACK_TIMEOUT", 60.0)  # from here on, refreshes wait
    for i in (9, 10, 11):
        store.sync.append(thread_id="live", expected_index=i, entries=[entries[i]])
        until(lambda i=i: len(ex) == i + 1, f"entry {i} folded")
    until(lambda: ex._session.follower.state["seq"] - ex._session.follower._acked >= 2, "two refreshes in flight")
    assert ex.length < len(entries)  # the views wait for the browser
    ex.follow(False)
    assert ex.length == len(entries) and ex.index == len(entries) - 1 and ex.verification["checked"] == len(entries)
