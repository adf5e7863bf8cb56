"""The explorer's mediator (explorer/session.py): panels coordinated by one session, whatever order they were built
in; traitlet messages sent from the kernel's loop, never from a worker thread, while the Python side is right at
once in any thread; and panels that know the session and nothing else."""

from __future__ import annotations

import ast
import asyncio
import inspect
import itertools
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sample_run import long_events, make_machine, record, tamper

from agent_explorer import (
    Explorer,
    Runs,
    SqliteEventLogStore,
    create_in_memory_event_log_store,
    read_log,
)
from agent_explorer.explorer import panels
from agent_explorer.explorer.panels.base import Panel
from agent_explorer.explorer.panels.chart import ChartPanel
from agent_explorer.explorer.protocol import TRAITS
from agent_explorer.samples import support_agent
from agent_explorer.samples.shipped import shipped_sample_logs_dir
from agent_explorer.samples.triage import triage_threads

PANELS_DIR = Path(panels.__file__).parent

# -- the order panels are built in is no dependency ------------------------------------------------------------


def _state(ex: Explorer) -> str:
    """Every synced traitlet of the protocol, with what differs by construction made one name: the chart's SVG id
    prefix (random per widget), and the ids and times the composer gives the entries it appends."""
    text = repr({name: getattr(ex, name) for name in TRAITS}).replace(ex._panel(ChartPanel)._token, "TOKEN")
    return re.sub(r"\b[0-9a-f]{32}\b", "ID", re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+Z", "TIME", text))


def _explore(kind: type[Explorer], machine: Any, entries: list[dict[str, Any]], **options: Any) -> list[str]:
    """A session of use touching every event: moves, a divergence, forks, the composer, line switches, a line
    growing, search, the table's pages, usage, coverage. The traitlets after each step."""
    ex = kind(machine, entries, compare_with=make_machine("2", step=2), page_size=4, **options)
    ex.wait_verified(timeout=60)
    seen = [_state(ex)]
    steps = [
        lambda: setattr(ex, "index", 4),  # onto the divergent entry: the recording's side is drawn
        lambda: ex._on_message(ex, {"kind": "table", "offset": 8, "limit": 4, "type": "", "text": ""}, []),
        lambda: ex.search("TICK"),
        lambda: ex._on_message(ex, {"kind": "composer", "open": True}, []),
        lambda: ex.compose({"type": "NOTE", "text": "what if"}, at=2),  # forks after 2, views the branch
        lambda: ex.compose({"type": "TICK"}),  # the branch on view grows (no line switch)
        lambda: ex.fork(at=3, name="second"),
        lambda: ex.checkout(),  # the recording again, at its last entry
        lambda: ex.usage(compare=ex.branches()[0]),
        lambda: ex.coverage_counts(),
        lambda: ex._on_message(ex, {"kind": "checkout", "branch": "second"}, []),
        lambda: setattr(ex, "index", 0),
    ]
    for step in steps:
        step()
        seen.append(_state(ex))
    return seen


ORDERS = {
    "reversed": tuple(reversed(Explorer.PANELS)),
    "rotated": Explorer.PANELS[4:] + Explorer.PANELS[:4],
    "interleaved": Explorer.PANELS[1::2] + Explorer.PANELS[::2],
}


@pytest.mark.parametrize("order", sorted(ORDERS))
@pytest.mark.parametrize("verify", ["auto", "background"])
def test_panels_built_in_any_order_show_the_same_traitlets(order: str, verify: str) -> None:
    machine = make_machine()
    entries = tamper(record(machine, long_events(40)), 4, type="NOTE", text="edited")
    built = type("Reordered", (Explorer,), {"PANELS": ORDERS[order]})
    assert [type(p) for p in built(machine, entries)._panels] == list(ORDERS[order])
    assert _explore(built, machine, entries, verify=verify) == _explore(Explorer, machine, entries, verify=verify)


def test_an_event_a_handler_publishes_is_delivered_after_the_one_it_handles(machine: Any, entries: Any) -> None:
    """Run-to-completion: every subscriber has the first event before anyone gets what it caused."""
    ex = Explorer(machine, entries)
    session = ex._session
    heard: list[str] = []

    class First:
        pass

    class Caused:
        pass

    session.subscribe(First, lambda _: (heard.append("a:first"), session.publish(Caused())))
    session.subscribe(First, lambda _: heard.append("b:first"))
    session.subscribe(Caused, lambda _: heard.append("a:caused"))
    session.publish(First())
    assert heard == ["a:first", "b:first", "a:caused"]


# -- panels know the session and nothing else ------------------------------------------------------------------


def _panel_modules() -> dict[str, Path]:
    return {p.stem: p for p in sorted(PANELS_DIR.glob("*.py")) if p.stem not in ("__init__", "base")}


@pytest.mark.parametrize("name", sorted(_panel_modules()))
def test_no_panel_module_references_another_panel(name: str) -> None:
    path = _panel_modules()[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    others = set(_panel_modules()) - {name}
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:  # `from .x import` inside panels/
            imported.add(node.module or "")
            imported.update(alias.name for alias in node.names if not node.module)
    assert not imported & others, f"panels/{name}.py imports the panel modules {sorted(imported & others)}"
    own = {n.name for n in tree.body if isinstance(n, ast.ClassDef) and n.name.endswith("Panel")}
    named = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id.endswith("Panel")}
    named |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr.endswith("Panel")}
    assert named <= own | {"Panel"}, f"panels/{name}.py names other panels: {sorted(named - own - {'Panel'})}"


@pytest.mark.parametrize("kind", Explorer.PANELS, ids=lambda k: k.__name__)
def test_a_panel_is_built_from_the_session_and_its_traits_only(kind: type[Panel]) -> None:
    """No callbacks into the widget, no other panel: the constructor takes (session, traits) and nothing else."""
    parameters = list(inspect.signature(kind.__init__).parameters)
    assert parameters == ["self", "session", "traits"], f"{kind.__name__}.__init__{parameters}"


# -- traitlet messages leave from the kernel's loop ------------------------------------------------------------


def _recording_sends(ex: Any) -> list[tuple[str, str, dict[str, Any]]]:
    """What the widget sends its front end: (sending thread, method, state), instead of sending it."""
    sent: list[tuple[str, str, dict[str, Any]]] = []
    ex._send = lambda msg, buffers=None: sent.append(
        (threading.current_thread().name, msg.get("method"), dict(msg.get("state") or {})))
    return sent


def _in_a_worker(work: Any) -> None:
    thread = threading.Thread(target=work, name="worker")
    thread.start()
    thread.join()


async def test_a_worker_threads_writes_reach_the_browser_only_on_the_loop(machine: Any, entries: Any) -> None:
    ex = Explorer(machine, entries)  # made on the loop's thread, as a cell makes it: its loop is the kernel's
    sent = _recording_sends(ex)
    home = threading.current_thread().name
    _in_a_worker(lambda: ex._session.goto(5))  # as the follower moves the cursor onto a new tail
    # The Python side is the truth at once, in any thread, though nothing has been sent yet.
    assert ex.index == 5 and ex.frame["index"] == 5 and ex.snapshot is not None
    assert sent == []
    _in_a_worker(lambda: ex._session.goto(6))
    await asyncio.sleep(0)  # one turn of the loop: the queued writes go, merged, with their newest values
    assert [(thread, method) for thread, method, _ in sent] == [(home, "update")]
    assert sent[0][2]["index"] == 6 and sent[0][2]["frame"]["index"] == 6
    # On the loop's own thread (a cell, a browser message) a write is sent at once.
    sent.clear()
    ex.index = 2
    assert [(thread, state.get("index")) for thread, _, state in sent][:1] == [(home, 2)]


def test_a_kernel_thread_answering_the_widget_sends_from_itself_and_takes_the_workers_messages(
    machine: Any, entries: Any
) -> None:
    """ipykernel 7 may hand a widget's messages to a subshell: a thread of the kernel with a loop of its own. The
    widget answers there (a burst of slider moves still draws only the newest, on that loop's next turn), and a
    worker's writes are then sent from there, so a long cell on the main shell does not hold the view back."""
    home_loop = asyncio.new_event_loop()
    try:
        ex = home_loop.run_until_complete(_made_on_a_loop(machine, entries))  # its home: this thread, this loop
    finally:
        home_loop.close()  # the main shell's loop no longer runs: only the subshell can send now
    sent = _recording_sends(ex)
    subshell = asyncio.new_event_loop()
    thread = threading.Thread(target=subshell.run_forever, name="subshell", daemon=True)
    thread.start()
    try:
        def browser_moves(*indices: int) -> None:  # what ipywidgets does with each update message from the front end
            for i in indices:
                ex._handle_msg({"content": {"data": {"method": "update", "state": {"index": i}, "buffer_paths": []}},
                                "buffers": []})

        subshell.call_soon_threadsafe(browser_moves, 3, 4, 5)
        asyncio.run_coroutine_threadsafe(asyncio.sleep(0.05), subshell).result(10)
        assert ex.index == 5 and ex.frame["index"] == 5
        frames = [state["frame"]["index"] for _, _, state in sent if "frame" in state]
        assert frames == [5], frames  # one frame for the burst, the newest
        sent.clear()
        _in_a_worker(lambda: ex._session.goto(7))
        assert ex.index == 7
        asyncio.run_coroutine_threadsafe(asyncio.sleep(0.05), subshell).result(10)
        assert [(thread, state.get("index")) for thread, _, state in sent] == [("subshell", 7)]
    finally:
        subshell.call_soon_threadsafe(subshell.stop)
        thread.join(10)
        subshell.close()


async def _made_on_a_loop(machine: Any, entries: Any) -> Explorer:
    return Explorer(machine, entries)


def test_with_no_loop_running_a_write_is_sent_inline(machine: Any, entries: Any) -> None:
    ex = Explorer(machine, entries)  # plain Python: nothing to hop to
    sent = _recording_sends(ex)
    _in_a_worker(lambda: ex._session.goto(3))
    assert {thread for thread, _, _ in sent} == {"worker"} and sent[0][2] == {"index": 3}  # then its frame


async def test_a_blocking_cell_reads_the_followed_cursor_while_the_messages_wait(machine: Any) -> None:
    """Notebook 06's pattern: a cell that blocks (never yielding to the loop) while the session advances from a
    worker reads the new index at once; the browser gets one merged update when the loop turns again."""
    log = record(machine, long_events(30))
    ex = Explorer(machine, log)
    sent = _recording_sends(ex)
    done = threading.Event()

    def advance() -> None:
        for i in range(1, 30):
            ex._session.goto(i)
        done.set()

    threading.Thread(target=advance, name="worker").start()
    seen = []
    while not done.is_set() or not seen or seen[-1] != 29:  # a blocking wait, as `while ...: time.sleep(...)`
        seen.append(ex.index)
        done.wait(0.001)
    assert seen[-1] == 29 and ex.frame["index"] == 29 and sent == []
    await asyncio.sleep(0)
    assert len(sent) == 1 and sent[0][2]["index"] == 29


async def test_a_followed_run_is_read_right_in_a_blocking_cell_and_sent_when_the_loop_turns() -> None:
    """What notebook 06 reads while its host appends: `len(ex)`, `ex.index`, `ex.live`, `ex.verification` and
    `ex.following` are current from the follow thread's writes while the cell blocks; the browser gets them in
    one merged update, from the kernel's thread, once the loop turns."""
    entries = list(read_log(shipped_sample_logs_dir() / "support_clean.jsonl"))
    store = create_in_memory_event_log_store()
    await store.append(thread_id="live", expected_index=0, entries=entries[:3])
    ex = Explorer.from_store(store, "live", support_agent, follow=True)
    try:
        sent = _recording_sends(ex)
        await store.append(thread_id="live", expected_index=3, entries=entries[3:8])
        deadline = time.monotonic() + 60
        while not (len(ex) == 8 and ex.index == 7):  # a cell that blocks: time.sleep, never an await
            assert time.monotonic() < deadline, "the follower never caught up"
            time.sleep(0.01)
        assert ex.following and ex.live["lastRecordedAt"] == entries[7]["recordedAt"] and ex.live["seq"] >= 1
        assert ex.verification["checked"] == 8 and ex.length == 8 and ex.frame["index"] == 7
        assert sent == []  # nothing left from the follow thread
        await asyncio.sleep(0)
        assert len(sent) == 1 and sent[0][0] == threading.current_thread().name
        assert sent[0][2]["index"] == 7 and sent[0][2]["length"] == 8 and "live" in sent[0][2]
    finally:
        ex.follow(False)


async def test_the_run_lists_worker_writes_reach_the_browser_on_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_EXPLORER_CACHE_DIR", str(tmp_path / "cache"))
    store = SqliteEventLogStore(tmp_path / "runs.db")
    for thread_id, thread in itertools.islice(triage_threads(shipped_sample_logs_dir(), 30), 30):
        await store.append(thread_id=thread_id, expected_index=0, entries=thread)
    await store.aclose()
    sent: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(Runs, "_send", lambda self, msg, buffers=None: sent.append(
        (threading.current_thread().name, dict(msg.get("state") or {}))))
    home = threading.current_thread().name
    runs = Runs(f"sqlite:///{tmp_path / 'runs.db'}", support_agent, page_size=5)  # the rest folds on its worker
    try:
        assert runs.wait_summarized(60)  # blocks the loop, as a cell would
        assert runs.progress["folding"] is False and runs.counts["folded"] == 30  # right at once
        await asyncio.sleep(0)
        assert sent and {thread for thread, _ in sent} == {home}
        assert any(state.get("progress", {}).get("folding") is False for _, state in sent)
    finally:
        runs.close()
