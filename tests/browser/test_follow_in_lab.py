"""Following a live run in a real JupyterLab through headless Chromium, while a separate process appends to it.

A notebook opens `Explorer.from_store(store, "live", support_agent, follow=True)` on a SQLite file (and on a
PostgreSQL schema); a writer process (tests/explorer/_live_writer.py) appends the recorded support run to that
thread one entry at a time, each append on the test's word, so the page is checked after every one. What a
user sees: the slider's range grows and the cursor rides the tail; moved back, the cursor stays and the header
offers the new entries; a tampered entry arriving live raises the banner and marks the track. Screenshots land
in each test's tmp_path.
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pg_server import pg_dsn

from agent_explorer import read_log

from .conftest import Lab, NotebookPage, browser_page, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LOGS = Path(__file__).parents[2] / "sample_logs"
WRITER = Path(__file__).parents[1] / "explorer" / "_live_writer.py"
WAIT = 20_000  # ms: a guard so a stuck follower fails instead of hanging the suite (not a speed goal)
THREAD = "ticket-1042"
TAMPERED = 10  # xstate.done.actor.finalReply: the host journals a state hash the machine does not derive


@dataclass
class Backend:
    kind: str
    url: str  # what the writer process opens
    open_code: str  # what the notebook opens


class Writer:
    """The host: a process of its own that appends the next entry each time it is told to."""

    def __init__(self, url: str, log: Path, start: int) -> None:
        self.proc = subprocess.Popen([sys.executable, str(WRITER), url, THREAD, str(log), str(start), "step"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def append(self) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()  # printed once the append has returned (committed)
        assert line.strip(), f"the writer process ended early (exit {self.proc.poll()})"
        return int(line)

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.proc.stdout.close()


def _drop_schema(dsn: str, schema: str) -> None:
    """Synchronously: Playwright's sync API keeps an event loop running on this thread."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest, lab: Lab) -> Iterator[Backend]:
    if request.param == "sqlite":
        path = lab.root / f"live-{uuid.uuid4().hex[:6]}.db"
        yield Backend("sqlite", f"sqlite:///{path}",
                      f"from agent_explorer import SqliteEventLogStore\nstore = SqliteEventLogStore({str(path)!r})")
        return
    dsn = pg_dsn()
    schema = f"live_{uuid.uuid4().hex[:10]}"
    separator = "&" if "?" in dsn else "?"
    try:
        yield Backend("postgres", f"{dsn}{separator}schema={schema}",
                      "from agent_explorer.stores import PostgresEventLogStore\n"
                      f"store = PostgresEventLogStore({dsn!r}, schema={schema!r})")
    finally:
        _drop_schema(dsn, schema)


@pytest.fixture
def nb(browser: Any, lab: Lab) -> Iterator[NotebookPage]:
    """A page of its own per test (a notebook left behind would ask "leave the page?"); its kernel is shut down
    afterwards, so no follower outlives the test."""
    with browser_page(browser) as fresh:
        page = NotebookPage(fresh, lab)
        try:
            yield page
        finally:
            with contextlib.suppress(Exception):
                page.page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")


def expect_tail(root: Any, last: int) -> None:
    """The slider's range ends at `last`, and the cursor is there: thumb, position text and drawn frame."""
    from playwright.sync_api import expect

    slider = root.get_by_test_id("slider")
    expect(slider).to_have_attribute("max", str(last), timeout=WAIT)
    expect(slider).to_have_value(str(last), timeout=WAIT)
    expect(root.get_by_test_id("position")).to_have_text(f"index {last:,} / {last:,}", timeout=WAIT)


def test_the_widget_follows_a_writer_process(backend: Backend, nb: NotebookPage, lab: Lab, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    entries = copy.deepcopy(list(read_log(LOGS / "support_clean.jsonl")))
    entries[TAMPERED]["verification"]["stateHash"] = "0" * 64
    log = tmp_path / "run.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    name = f"follow-{backend.kind}.ipynb"
    write_notebook(lab.root / name, [
        f"{backend.open_code}\nfrom agent_explorer import Explorer\nfrom agent_explorer.samples import support_agent",
        f"ex = Explorer.from_store(store, {THREAD!r}, support_agent, follow=True)\nex",
    ])
    seed = Writer(backend.url, log, 0)  # the host starts the run: its init entry and the first completion
    writer: Writer | None = None
    try:
        assert [seed.append(), seed.append()] == [0, 1]
        seed.close()
        nb.open(name, widgets=1)
        root = nb.widget(0)
        live = root.get_by_test_id("live")
        expect(live).to_be_visible(timeout=WAIT)
        expect(live).to_contain_text("live")
        expect(root.get_by_test_id("live-last")).to_have_text("watching for new entries")  # opened: no append yet
        expect_tail(root, 1)  # a live run opens at its tail
        writer = Writer(backend.url, log, 2)

        # At the tail, the cursor rides the tail: after every append the range and the cursor both moved on.
        for index in range(2, 7):
            assert writer.append() == index
            expect_tail(root, index)
            expect(root.get_by_test_id("state-value")).not_to_have_text("", timeout=WAIT)
        expect(root.get_by_test_id("live-last")).to_be_visible()
        last_append = str(root.get_by_test_id("live-last").text_content())
        assert re.fullmatch(r"last append \d\d:\d\d:\d\d \((just now|\d+ s ago)\)", last_append), last_append
        assert root.get_by_test_id("live-jump").count() == 0
        assert root.get_by_test_id("verify-status").text_content() == "verified"
        # The page acknowledges each refresh it drew (the kernel paces refreshes to the browser): the last one too.
        acknowledged = "print(ex._session.follower._acking and ex._session.follower._acked == ex.live['seq'])"
        for _ in range(WAIT // 100):  # asked again and again: a kernel busy waiting would not read the acknowledgement
            if nb.kernel(acknowledged).strip() == "True":
                break
            nb.page.wait_for_timeout(100)
        else:
            raise AssertionError("the page never acknowledged the last refresh it drew")
        nb.shot(tmp_path / "live-at-tail.png", 0)

        # Moved back, the cursor stays; the range still grows and the header offers the entries past the cursor.
        slider = root.get_by_test_id("slider")
        slider.evaluate("""(el) => { el.value = "2"; el.dispatchEvent(new Event("input", {bubbles: true}));
                                     el.dispatchEvent(new Event("change", {bubbles: true})); }""")
        expect(root.get_by_test_id("position")).to_have_text("index 2 / 6", timeout=WAIT)
        for index, offered in ((7, "1 new entry"), (8, "2 new entries"), (9, "3 new entries")):
            assert writer.append() == index
            expect(slider).to_have_attribute("max", str(index), timeout=WAIT)
            expect(root.get_by_test_id("live-jump")).to_contain_text(offered, timeout=WAIT)
            expect(root.get_by_test_id("position")).to_have_text(f"index 2 / {index}")
            expect(slider).to_have_value("2")
        expect(root.get_by_test_id("live-jump")).to_have_text("3 new entries → go to latest")
        nb.shot(tmp_path / "live-new-entries.png", 0)
        root.get_by_test_id("live-jump").click()
        expect_tail(root, 9)
        expect(root.get_by_test_id("live-jump")).to_have_count(0, timeout=WAIT)
        expect(root.get_by_test_id("state-value")).to_have_text("replying", timeout=WAIT)

        # The host journals a state its machine does not derive: the banner and the track say so at once.
        banner = root.get_by_test_id("divergence")
        assert banner.is_hidden()
        assert writer.append() == TAMPERED
        expect_tail(root, TAMPERED)
        expect(banner).to_be_visible(timeout=WAIT)
        expect(banner).to_contain_text(f"Replay diverges at index {TAMPERED}")
        expect(root.get_by_test_id("verify-status")).to_have_text("1 divergent", timeout=WAIT)
        expect(root.locator(".ae-track .ae-mark.divergent")).to_have_count(1, timeout=WAIT)
        assert root.locator(".ae-track .ae-mark.divergent").get_attribute("title") == f"divergent: {TAMPERED}"
        assert writer.append() == TAMPERED + 1  # the run goes on past it
        expect_tail(root, TAMPERED + 1)
        expect(root.get_by_test_id("state-value")).to_have_text("resolved", timeout=WAIT)
        nb.shot(tmp_path / "live-divergent.png", 0)
        writer.close()
        writer = None
        assert nb.kernel("print(len(ex), ex.first_divergence, ex.following)").split() == ["12", "10", "True"]

        # follow(False) from the notebook: the badge goes away.
        assert nb.kernel("ex.follow(False)") == ""
        expect(live).to_be_hidden(timeout=WAIT)
        assert nb.dialogs == [], f"a dialog fired: {nb.dialogs}"
    finally:
        if writer is not None:
            writer.close()
        if seed.proc.poll() is None:
            seed.close()
        with contextlib.suppress(Exception):  # whatever failed, leave no follower polling in the kernel
            nb.kernel("if 'ex' in globals(): ex.follow(False)")


def test_the_event_table_follows_the_cursor_while_following(nb: NotebookPage, lab: Lab, tmp_path: Path) -> None:
    """Pages of 4 rows over a run a writer process grows entry by entry: after every append the cursor's row is on
    the table and highlighted (the table used to stay a page behind the cursor at the tail)."""
    from playwright.sync_api import expect

    path = lab.root / f"live-table-{uuid.uuid4().hex[:6]}.db"
    name = "follow-table.ipynb"
    write_notebook(lab.root / name, [
        f"from agent_explorer import Explorer, SqliteEventLogStore\nfrom agent_explorer.samples import support_agent\n"
        f"store = SqliteEventLogStore({str(path)!r})",
        f"ex = Explorer.from_store(store, {THREAD!r}, support_agent, follow=True, page_size=4)\nex",
    ])
    writer = Writer(f"sqlite:///{path}", LOGS / "support_clean.jsonl", 0)
    try:
        assert [writer.append(), writer.append()] == [0, 1]
        nb.open(name, widgets=1)
        root = nb.widget(0)
        expect_tail(root, 1)
        for index in range(2, 12):
            assert writer.append() == index
            expect_tail(root, index)
            current = root.locator(".ae-events tr.ae-row.current")
            expect(current).to_have_count(1, timeout=WAIT)
            expect(current).to_have_attribute("data-index", str(index))
            first = max(0, index - 3) + 1  # the last page is full and ends at the last row (rows count from 1)
            expect(root.locator(".ae-page-label")).to_have_text(f"rows {first}–{index + 1} of {index + 1}")
        nb.shot(tmp_path / "live-table-at-tail.png", 0)
        assert nb.dialogs == [], f"a dialog fired: {nb.dialogs}"
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            nb.kernel("if 'ex' in globals(): ex.follow(False)")
