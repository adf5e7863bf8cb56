"""The run list (`Runs`) in a real JupyterLab through headless Chromium, over a SQLite store of triage tickets.

What a user does: the list renders one page with the counts per status; clicking a column header sorts; the status
chips and the verified control filter; a filter set from Python shows in the controls; clicking a row (or arrow keys
and Enter) opens that thread's Explorer under the list; with `follow=True`, a thread another process starts appears.
A thread id that looks like HTML stays text. Screenshots of the list at the default size land in tmp_path (the ones
in docs/screenshots are copies).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_explorer import SqliteEventLogStore, read_log
from agent_explorer.samples.shipped import shipped_sample_logs_dir
from agent_explorer.samples.triage import fate_of, triage_thread_id, triage_threads

from .conftest import Lab, NotebookPage, browser_page, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LOGS = shipped_sample_logs_dir()
WRITER = Path(__file__).parents[1] / "explorer" / "_live_writer.py"
TICKETS = 120
PAGE = 25
HTML_ID = "<b>bold</b>-ticket"
WAIT = 30_000  # ms: a guard so a stuck kernel fails the test instead of hanging the suite (not a speed goal)


def _fates(name: str) -> list[str]:
    return [triage_thread_id(n) for n in range(1, TICKETS + 1) if fate_of(n).name == name]


@pytest.fixture(scope="module")
def runs_page(browser: Any, lab: Lab) -> Iterator[NotebookPage]:
    db = lab.root / "triage-runs.db"

    store = SqliteEventLogStore(db)  # synchronously: Playwright's sync API keeps a loop running on this thread
    try:
        for thread_id, entries in triage_threads(LOGS, TICKETS):
            store.sync.append(thread_id=thread_id, expected_index=0, entries=entries)
        store.sync.append(thread_id=HTML_ID, expected_index=0, entries=list(read_log(LOGS / "support_clean.jsonl")))
    finally:
        store.sync.close()
    cell = (
        "import os\n"
        f"os.environ['AGENT_EXPLORER_CACHE_DIR'] = {str(lab.root / 'runs-cache')!r}\n"
        "from agent_explorer import Runs\n"
        "from agent_explorer.samples import support_agent\n"
        f"runs = Runs({'sqlite:///' + str(db)!r}, support_agent, follow=True, page_size={PAGE})\n"
        "runs"
    )
    write_notebook(lab.root / "runs.ipynb", [cell])
    with browser_page(browser) as fresh:
        notebook = NotebookPage(fresh, lab)
        notebook.open("runs.ipynb", widgets=1)
        yield notebook


def _threads(page: Any) -> list[str]:
    return list(page.eval_on_selector_all(".ae-runs tbody tr", "rows => rows.map(r => r.dataset.thread)"))


def _py(notebook: NotebookPage, expression: str) -> Any:
    out = notebook.kernel(f"import json as _j; print(_j.dumps({expression}))")
    return json.loads(out.strip().splitlines()[-1])


def test_the_list_renders_a_page_and_the_counts(runs_page: NotebookPage, tmp_path: Path) -> None:
    page = runs_page.page
    assert runs_page.kernel("print(runs.wait_summarized(60))").strip() == "True"
    page.wait_for_function("() => !document.querySelector('.ae-runs-bar') || document.querySelector('.ae-runs-bar').hidden",
                           timeout=WAIT)
    assert len(_threads(page)) == PAGE  # one page in the browser, never the store
    expected_done = len(_fates("finished")) + len(_fates("escalated")) + 1  # + the clean run with the HTML id
    chip = page.locator('.ae-runs-status[data-status="done"]')
    assert chip.inner_text().split() == ["done", str(expected_done)]
    assert page.locator('.ae-runs-status[data-status="in-flight"]').inner_text().split() == [
        "in-flight", str(len(_fates("crashed")))]
    assert page.locator(".ae-runs-all").inner_text() == f"all {TICKETS + 1}"
    label = page.locator('[data-testid="runs-page-label"]').inner_text()
    assert label == f"1–{PAGE} of {TICKETS + 1}"
    runs_page.shot(tmp_path / "07-runs-list.png", 0)


def test_a_click_on_a_header_sorts_and_python_sees_it(runs_page: NotebookPage) -> None:
    page = runs_page.page
    page.locator('.ae-runs th[data-column="thread_id"]').click()
    first = json.dumps(HTML_ID)  # "<" sorts before "t"
    page.wait_for_function(f"() => document.querySelector('.ae-runs tbody tr')?.dataset.thread === {first}",
                           timeout=WAIT)
    assert _threads(page) == sorted(_threads(page))
    assert _py(runs_page, "runs.shown[:3]") == [HTML_ID, "ticket-00001", "ticket-00002"]
    page.locator('.ae-runs th[data-column="thread_id"]').click()  # again: the other way
    page.wait_for_function(
        "() => document.querySelector('.ae-runs tbody tr')?.dataset.thread === 'ticket-00120'", timeout=WAIT)
    assert page.locator('.ae-runs th[data-column="thread_id"]').get_attribute("aria-sort") == "descending"


def test_filters_from_the_ui_and_from_python(runs_page: NotebookPage, tmp_path: Path) -> None:
    page = runs_page.page
    page.locator('.ae-runs-status[data-status="in-flight"]').click()
    crashed = _fates("crashed")
    page.wait_for_function(f"() => document.querySelectorAll('.ae-runs tbody tr').length === {len(crashed)}",
                           timeout=WAIT)
    assert set(_threads(page)) == set(crashed)
    assert _py(runs_page, "sorted(runs.shown)") == sorted(crashed)
    runs_page.shot(tmp_path / "07-runs-in-flight.png", 0)
    # From Python: the list and the controls follow.
    runs_page.kernel("runs.filter(verified=False)")
    diverging = _fates("diverging")
    page.wait_for_function(f"() => document.querySelectorAll('.ae-runs tbody tr').length === {len(diverging)}",
                           timeout=WAIT)
    assert set(_threads(page)) == set(diverging)
    assert page.locator(".ae-runs-verified").input_value() == "false"
    assert page.locator('.ae-runs-status[data-status="in-flight"]').get_attribute("aria-pressed") == "false"
    assert all(cell.startswith("✗") for cell in page.locator(".ae-runs tbody td:nth-child(6)").all_inner_texts())
    # Typed into the state box: the idle runs waiting for approval.
    runs_page.kernel("runs.filter()")
    page.locator(".ae-runs-state").fill("awaitingApproval")
    waiting = _fates("waiting")
    page.wait_for_function(f"() => document.querySelectorAll('.ae-runs tbody tr').length === {min(len(waiting), PAGE)}",
                           timeout=WAIT)
    assert _py(runs_page, "sorted(runs.shown)") == sorted(waiting)
    page.locator(".ae-runs-state").fill("")
    runs_page.kernel("runs.filter()")


def test_html_in_a_thread_id_stays_text(runs_page: NotebookPage) -> None:
    page = runs_page.page
    runs_page.kernel(f"runs.filter(text={HTML_ID[:8]!r})")
    page.wait_for_function("() => document.querySelectorAll('.ae-runs tbody tr').length === 1", timeout=WAIT)
    cell = page.locator(".ae-runs tbody td.ae-runs-thread")
    assert cell.inner_text() == HTML_ID
    assert page.locator(".ae-runs tbody b").count() == 0
    runs_page.kernel("runs.filter()")


def test_a_click_opens_the_explorer_under_the_list_and_keys_move_between_rows(
    runs_page: NotebookPage, tmp_path: Path,
) -> None:
    page = runs_page.page
    assert runs_page.kernel("runs.filter(verified=False); runs.sort('thread_id')") == ""  # no error in the kernel
    diverging = sorted(_fates("diverging"))
    try:
        page.wait_for_function(f"() => document.querySelector('.ae-runs tbody tr')?.dataset.thread === '{diverging[0]}'",
                               timeout=WAIT)
    except Exception as error:  # say what Python and the page hold, so a failure names its side
        python = _py(runs_page, "[runs.page['filter'], runs.page['sort'], runs.page['total'], runs.shown[:3]]")
        raise AssertionError(f"first row {_threads(page)[:3]}, Python {python}, wanted {diverging[0]}") from error
    page.locator(f'.ae-runs tbody tr[data-thread="{diverging[0]}"]').click()
    page.wait_for_function("() => document.querySelectorAll('.ae-root[data-ready=\"true\"]').length >= 2",
                           timeout=60_000)
    assert _py(runs_page, "runs.selected") == diverging[0]
    assert _py(runs_page, "runs.explorer.thread_id") == diverging[0]
    # The explorer is under the list, in the same output.
    below = page.evaluate("""() => {
        const [list, explorer] = document.querySelectorAll('.ae-root');
        return list.classList.contains('ae-runs') && !explorer.classList.contains('ae-runs')
            && list.getBoundingClientRect().bottom <= explorer.getBoundingClientRect().top;
    }""")
    assert below
    assert page.locator('.ae-banner').first.is_visible()  # the divergence the list flagged, in the explorer
    runs_page.shot(tmp_path / "07-runs-selected.png")
    # Keyboard: the selected row is focused; ArrowDown then Enter opens the next run.
    page.locator(f'.ae-runs tbody tr[data-thread="{diverging[0]}"]').focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    page.wait_for_function(
        f"() => document.querySelector('.ae-runs tr.ae-selected')?.dataset.thread === '{diverging[1]}'", timeout=WAIT)
    assert _py(runs_page, "runs.selected") == diverging[1]
    runs_page.kernel("runs.select(None); runs.filter()")


def test_following_shows_a_thread_another_process_starts(runs_page: NotebookPage, lab: Lab) -> None:
    page = runs_page.page
    runs_page.kernel("runs.sort('thread_id', descending=True)")
    thread = "zz-live-run"
    writer = subprocess.Popen(
        [sys.executable, str(WRITER), f"sqlite:///{lab.root / 'triage-runs.db'}", thread,
         str(LOGS / "support_clean.jsonl"), "0", "0", "3"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert writer.wait(timeout=60) == 0
    finally:
        assert writer.stdout is not None
        writer.stdout.close()
    page.wait_for_function(
        f"() => document.querySelector('.ae-runs tbody tr')?.dataset.thread === '{thread}'", timeout=WAIT)
    row = page.locator(f'.ae-runs tbody tr[data-thread="{thread}"]')
    assert row.get_attribute("data-status") == "in-flight"  # three entries: the lookup done, classify in flight
    assert "following" in page.locator('[data-testid="runs-progress"]').inner_text()
