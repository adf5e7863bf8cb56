"""A postmortem in a real JupyterLab + Chromium: both sides of a divergence on the chart and in the state panel
(with the recording machine, and inferred without it), the mismatch above the fold, and exploring a store-backed
run (fork, append, the composer's Send) leaving the store exactly as it was."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import Lab, NotebookPage, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LOGS = Path(__file__).parents[2] / "sample_logs"
OPEN = f"""\
from agent_explorer import Explorer, read_log
from agent_explorer.samples import support_agent, support_agent_old_policy
entries = read_log({str(LOGS / "support_divergent.jsonl")!r})
inferred = Explorer(support_agent, entries)
inferred.index = 8
inferred"""
RECORDER = """\
recorder = Explorer(support_agent, entries, compare_with=support_agent_old_policy)
recorder.index = 6
recorder"""
STORE = f"""\
import tempfile
from pathlib import Path
from agent_explorer import SqliteEventLogStore
clean = read_log({str(LOGS / "support_clean.jsonl")!r})
store = SqliteEventLogStore(Path(tempfile.mkdtemp()) / "prod.db")
store.sync.append(thread_id="support-clean", expected_index=0, entries=clean)
before = store.sync.list_threads()
live = Explorer.from_store(store, "support-clean", support_agent)
live"""


@pytest.fixture(scope="module")
def nb(notebook_page: NotebookPage, lab: Lab) -> Iterator[NotebookPage]:
    write_notebook(lab.root / "postmortem.ipynb", [OPEN, RECORDER, STORE])
    notebook_page.open("postmortem.ipynb", widgets=3)
    yield notebook_page
    assert notebook_page.dialogs == [], f"a dialog fired: {notebook_page.dialogs}"


def recording_nodes(root: Any) -> list[str]:
    return sorted(root.locator("svg.ae-svg g.node.recording text").all_text_contents())


def above_the_fold(page: Any, root: Any, locator: Any) -> bool:
    """With the widget's top at the top of the screen (as when a user scrolls to it), `locator` is on screen."""
    root.evaluate("(el) => el.scrollIntoView({block: 'start'})")
    box = locator.bounding_box()
    viewport = page.viewport_size
    return bool(box) and 0 <= box["y"] and box["y"] + box["height"] <= viewport["height"]


def test_with_the_recording_machine_both_sides_are_drawn_and_named(nb: NotebookPage, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    root = nb.widget(1)
    root.scroll_into_view_if_needed()
    expect(root.get_by_test_id("position")).to_have_text("index 6 / 11")
    # The chart: the recording's state carries its own highlight on its node's SVG element, beside the replay's.
    expect(root.locator("svg.ae-svg g.node.recording")).not_to_have_count(0)
    assert "awaitingApproval" in recording_nodes(root)
    assert "deciding" in root.locator("svg.ae-svg g.node.active text").all_text_contents()
    legend = root.get_by_test_id("legend-sides")
    expect(legend).to_be_visible()
    expect(legend).to_contain_text("recording")
    expect(legend).to_contain_text("replay")
    # The state panel names both values; the mismatch is in the header, above the fold.
    expect(root.get_by_test_id("recorded-value")).to_have_text("awaitingApproval")
    expect(root.get_by_test_id("state-value")).to_have_text("deciding")
    expect(root.get_by_test_id("side-why")).to_contain_text("compare_with")
    here = root.get_by_test_id("here-mismatch")
    expect(here).to_be_visible()
    assert above_the_fold(nb.page, root, here)
    assert above_the_fold(nb.page, root, root.get_by_test_id("both-sides"))
    # The machine comparison runs recording -> replay, as compare_machines(recorder, today) in the notebook.
    machines = root.get_by_test_id("machines")
    expect(machines).to_contain_text("part ways at index 6")
    expect(machines.get_by_test_id("diff")).to_contain_text("recording → replay")
    expect(machines.get_by_test_id("diff")).to_contain_text('"awaitingApproval" → "deciding"')
    root.screenshot(path=str(tmp_path / "both-sides-recorder.png"))


def test_without_it_the_recordings_states_are_inferred_and_said_in_words(nb: NotebookPage, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    root = nb.widget(0)
    root.scroll_into_view_if_needed()
    expect(root.get_by_test_id("position")).to_have_text("index 8 / 11")
    assert "refunding" in recording_nodes(root)  # issueRefund completed next: it was invoked, so refunding
    expect(root.get_by_test_id("side-why")).to_contain_text("issueRefund")
    expect(root.get_by_test_id("legend-why")).to_contain_text("inferred")
    # Every divergent index shows it; a clean index shows one side only.
    nb.kernel("inferred.index = 5")
    expect(root.get_by_test_id("position")).to_have_text("index 5 / 11")
    expect(root.locator("svg.ae-svg g.node.recording")).to_have_count(0)
    expect(root.get_by_test_id("legend-sides")).to_be_hidden()
    expect(root.get_by_test_id("here-mismatch")).to_be_hidden()
    for index in (6, 7, 9, 10):
        nb.kernel(f"inferred.index = {index}")
        expect(root.get_by_test_id("position")).to_have_text(f"index {index} / 11")
        expect(root.get_by_test_id("here-mismatch")).to_be_visible()
        expect(root.get_by_test_id("both-sides")).to_be_visible()
    root.screenshot(path=str(tmp_path / "both-sides-inferred.png"))


def test_forks_appends_and_the_composers_send_never_touch_the_store(nb: NotebookPage) -> None:
    from playwright.sync_api import expect

    root = nb.widget(2)
    root.scroll_into_view_if_needed()
    out = nb.kernel(
        "b = live.fork(at=8, name='rejected')\n"
        "b.append({'type': 'REJECT', 'approver': 'kim', 'reason': 'over the limit'})\n"
        "print(store.sync.list_threads() == before, b.name, len(b))"
    )
    assert out.split() == ["True", "rejected", "9"], out
    nb.kernel("live.index = 7")
    root.get_by_test_id("composer-toggle").click()
    approve = root.get_by_test_id("composer").locator('button[data-type="APPROVE"]')
    approve.click()
    root.locator('input[data-field="approver"]').fill("kim")
    root.get_by_test_id("composer-send").click()
    expect(root.get_by_test_id("composer-sent")).to_contain_text("APPROVE")
    out = nb.kernel("print(store.sync.list_threads() == before, [t.thread_id for t in store.sync.list_threads()])")
    assert out.split()[0] == "True", out
    # Saving is explicit, and writes a new thread (never the recording's).
    out = nb.kernel("print(b.save(), store.sync.length('support-clean'), store.sync.length(b.thread_id))")
    assert out.split() == ["support-clean~rejected", "12", "9"], out
