"""Branches, the event composer and pending work, in a real JupyterLab through headless Chromium.

One notebook opens the recorded support run (`support`). A user reads the timer armed while the agent waits
for approval, composes an APPROVE in the page (schema-checked before sending), lands on the new branch, reads
the lineage beside the slider and clicks back to the recording. Screenshots land in each test's tmp_path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import Lab, NotebookPage, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SUPPORT_LOG = Path(__file__).parents[2] / "sample_logs" / "support_clean.jsonl"
XSS = "<img src=x onerror=alert(1)>"
SETUP = f"""\
from agent_explorer import read_log
from agent_explorer.explorer import Explorer
from agent_explorer.samples import support_agent
support = Explorer(support_agent, read_log({str(SUPPORT_LOG)!r}))
support"""
TIMER = "xstate.after.approvalTimeout.support.awaitingApproval"


@pytest.fixture(scope="module")
def nb(notebook_page: NotebookPage, lab: Lab) -> Iterator[NotebookPage]:
    write_notebook(lab.root / "branching.ipynb", [SETUP])
    notebook_page.open("branching.ipynb", widgets=1)
    yield notebook_page
    assert notebook_page.dialogs == [], f"a dialog fired: {notebook_page.dialogs}"


def expect_at(root: Any, index: int, value: str) -> None:
    from playwright.sync_api import expect

    expect(root.get_by_test_id("position")).to_have_text(re.compile(rf"^index {index:,} / "), timeout=10_000)
    expect(root.get_by_test_id("state-value")).to_have_text(value, timeout=10_000)


def go(nb: NotebookPage, index: int) -> None:
    assert nb.kernel(f"support.index = {index}") == ""


def dark_and_back(nb: NotebookPage, shot: Path) -> None:
    light = nb.widget(0).evaluate("el => getComputedStyle(el).backgroundColor")
    nb.page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
    nb.page.wait_for_function(
        "(before) => getComputedStyle(document.querySelector('.ae-root')).backgroundColor !== before",
        arg=light,
        timeout=20_000,
    )
    nb.page.wait_for_function("() => !document.querySelector('#jupyterlab-splash')", timeout=20_000)
    nb.shot(shot, 0)
    nb.page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
    nb.page.wait_for_function(
        "(before) => getComputedStyle(document.querySelector('.ae-root')).backgroundColor === before",
        arg=light,
        timeout=20_000,
    )


def test_timers_and_children_in_flight_per_index(nb: NotebookPage, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    root = nb.widget(0)
    go(nb, 0)
    expect_at(root, 0, "lookingUpOrder")
    expect(root.get_by_test_id("inflight")).to_contain_text("lookupOrder#1")
    go(nb, 7)  # waiting for a reviewer: no child, the 4-hour approval timer armed at 6
    expect_at(root, 7, "awaitingApproval")
    timers = root.get_by_test_id("timers")
    expect(timers).to_contain_text("4 h")
    expect(timers).to_contain_text("after → support.awaitingApproval")
    expect(root.get_by_test_id("inflight")).to_have_count(0)
    timers.get_by_role("button", name="since #6").click()  # jump to where the timer was armed
    expect_at(root, 6, "awaitingApproval")
    expect(root.get_by_test_id("effects")).to_contain_text(TIMER + "#1")
    root.get_by_test_id("state").screenshot(path=str(tmp_path / "pending.png"))


def test_compose_an_event_checked_by_its_schema_and_move_to_the_branch(nb: NotebookPage, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    root = nb.widget(0)
    go(nb, 7)
    expect_at(root, 7, "awaitingApproval")
    root.get_by_test_id("composer-toggle").click()
    choices = root.get_by_test_id("composer-choices")
    expect(choices.locator(f'button[data-type="{TIMER}"]')).to_have_count(1)
    expect(choices.locator('button.ae-choice:not(.ignored)[data-type="APPROVE"]')).to_have_count(1)
    expect(choices.locator('button.ae-choice.ignored[data-type="SEND_REPLY"]')).to_have_count(1)
    expect(root.get_by_test_id("composer-where")).to_contain_text("forks a new branch")
    # an event the state would ignore says so before it is sent
    choices.locator('button[data-type="SEND_REPLY"]').click()
    expect(root.get_by_test_id("composer-check")).to_contain_text("would be ignored in awaitingApproval")
    # the schema refuses an APPROVE without an approver, naming the field
    choices.locator('button[data-type="APPROVE"]').click()
    check = root.get_by_test_id("composer-check")
    expect(check).to_contain_text("invalid")
    expect(check).to_contain_text("approver")
    expect(root.locator('input[data-field="approver"].invalid')).to_have_count(1)
    root.locator('input[data-field="approver"]').fill(XSS)
    expect(check).to_contain_text("awaitingApproval → refunding")
    root.get_by_test_id("composer").screenshot(path=str(tmp_path / "composer.png"))
    root.get_by_test_id("composer-send").click()
    # the view moved to the new branch, on the appended entry
    expect_at(root, 8, "refunding")
    expect(root.get_by_test_id("composer-sent")).to_contain_text("now viewing fork-1, index 8")
    expect(root.get_by_test_id("lineage")).to_be_visible()
    expect(root.get_by_test_id("line-fork-1")).to_have_attribute("aria-current", "true")
    expect(root.get_by_test_id("inflight")).to_contain_text("issueRefund#1")
    assert XSS in str(root.get_by_test_id("event-json").text_content()), "the payload is drawn as text"
    assert root.locator("img[src='x']").count() == 0
    assert nb.kernel("print(support.line.name, len(support), support.entry['event']['approver'] == XSS)".replace("XSS", repr(XSS))).split() == ["fork-1", "9", "True"]
    # at the branch's end the composer appends to it: complete the refund task in flight
    expect(root.get_by_test_id("composer-where")).to_contain_text("appends to fork-1")
    done = choices.locator('button[data-type="xstate.done.actor.issueRefund"]')
    done.click()
    root.locator('textarea[data-field="output"]').fill('{"refundId": "RF-what-if", "amountCents": 8900}')
    expect(check).to_contain_text("refunding → replying")
    root.get_by_test_id("composer-send").click()
    expect_at(root, 9, "replying")
    assert nb.kernel("print(len(support.branches()), support.line.name)").split() == ["1", "fork-1"]
    root.screenshot(path=str(tmp_path / "branch.png"))
    dark_and_back(nb, tmp_path / "branch-dark.png")


def test_the_lineage_beside_the_slider(nb: NotebookPage, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    root = nb.widget(0)
    # a fork of the branch, made from Python, shows as a child row under it
    out = nb.kernel(
        "b = support.line.fork(at=10); b.append({'type': 'xstate.error.actor.finalReply', 'error': 'model down'})"
        "\nsupport.branches(); print(b.name, b.parent.name)"
    )
    assert out.split() == ["fork-2", "fork-1"]
    lines = root.get_by_test_id("lineage")
    expect(lines.locator(".ae-line-row")).to_have_count(3)
    assert lines.locator(".ae-line-label").all_text_contents() == ["recording", "fork-1", "fork-2"]
    expect(lines.get_by_test_id("line-fork-2").locator(".ae-line-fork")).to_have_count(1)
    lines.screenshot(path=str(tmp_path / "lineage.png"))
    # clicking a row views that line: back to the recording, then to the fork of the fork
    lines.get_by_test_id("line-recording").click()
    expect_at(root, 11, "resolved")
    expect(lines.get_by_test_id("line-recording")).to_have_attribute("aria-current", "true")
    lines.get_by_test_id("line-fork-2").click()
    expect_at(root, 10, "replying")
    expect(root.locator(".ae-chip.status-error")).to_have_count(1)  # no onError: the machine stopped
    expect(root.get_by_test_id("state-error")).to_have_text("machine error: Error: model down")
    expect(root.get_by_test_id("state")).to_contain_text("no onError handles it")
    expect(root.get_by_test_id("composer-sent")).to_have_text("")  # the note stayed with fork-1
    assert nb.kernel("print(support.line.name)").strip() == "fork-2"
    root.screenshot(path=str(tmp_path / "fork-of-fork.png"))
    # any two lines diff: the line on view against the recording, the events each has where they part
    assert nb.kernel("print(support.compare(support.branches().root).index)").strip() == "8"
    expect(root.get_by_test_id("compare-events")).to_have_text(
        "at index 8: fork-2 has APPROVE, recording has APPROVE"
    )
    expect(root.get_by_test_id("compare")).to_contain_text("approver")


def test_a_static_export_shows_lines_and_pending_work_but_composes_nothing(
    nb: NotebookPage, browser: Any, lab: Lab
) -> None:
    """to_html of a branch on view: its lineage and timers are drawn from the page; composing needs a kernel, so the
    page has no composer."""
    from playwright.sync_api import expect

    target = lab.root / "branch.html"
    out = nb.kernel(f"support.checkout(support.branches()[0], index=7); support.to_html({str(target)!r}); print('ok')")
    assert out.strip() == "ok", out
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    refused: list[str] = []
    context.route(
        "**/*",
        lambda route: route.continue_()
        if route.request.url.startswith(("file://", "blob:"))
        else (refused.append(route.request.url), route.abort()),
    )
    try:
        page = context.new_page()
        page.goto(target.as_uri())
        page.wait_for_selector('.ae-root[data-ready="true"]', timeout=30_000)
        root = page.locator(".ae-root")
        expect(root.get_by_test_id("timers")).to_contain_text("4 h")
        expect(root.get_by_test_id("line-fork-1")).to_have_attribute("aria-current", "true")
        # Nothing here can compose (no kernel appends a branch): the page draws no composer and no Compose button.
        expect(root.get_by_test_id("composer")).to_have_count(0)
        expect(root.get_by_test_id("composer-toggle")).to_have_count(0)
        assert refused == []
    finally:
        context.close()
