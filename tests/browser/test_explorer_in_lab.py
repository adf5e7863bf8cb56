"""The explorer in a real JupyterLab, driven through headless Chromium: what a user sees and does.

One notebook shows two explorers: the sample run (`ex`) and the same run with entry 4 tampered (`bad`).
Screenshots land in each test's tmp_path.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import Lab, NotebookPage, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

XSS = "<img src=x onerror=alert(1)>"
SETUP = """\
from sample_run import make_machine, sample_run, tamper
from agent_explorer.explorer import Explorer
machine = make_machine()
entries = sample_run(machine)
ex = Explorer(machine, entries)
ex"""
TAMPERED = """\
bad = Explorer(machine, tamper(entries, 4, type="NOTE", text="edited"), compare_with=make_machine("2", step=2))
bad"""


SUPPORT_LOG = Path(__file__).parents[2] / "sample_logs" / "support_clean.jsonl"
SUPPORT = f"""\
from agent_explorer import read_log
from agent_explorer.samples import support_agent
support = Explorer(support_agent, read_log({str(SUPPORT_LOG)!r}))
support"""


LONG = """\
from agent_explorer.explorer import widget as explorer_widget
from sample_run import long_events, record
explorer_widget.SYNC_VERIFY_LIMIT = 500  # so this 5,001-entry log takes the long-log path
big = Explorer(machine, record(machine, long_events(5000)))
big"""


HOSTILE = """\
from sample_run import XSS
hostile = Explorer(machine, record(machine, [{"type": XSS, "html": "<script>alert(2)</script>", XSS: XSS}]))
hostile"""


@pytest.fixture(scope="module")
def nb(notebook_page: NotebookPage, lab: Lab) -> Iterator[NotebookPage]:
    write_notebook(
        lab.root / "explore.ipynb", [SETUP, TAMPERED, SUPPORT, LONG, HOSTILE]
    )
    notebook_page.open("explore.ipynb", widgets=5)
    yield notebook_page
    assert notebook_page.dialogs == [], f"a dialog fired: {notebook_page.dialogs}"


def active_labels(root: Any) -> list[str]:
    return sorted(root.locator("svg g.node.active text").all_text_contents())


def position(root: Any) -> str:
    return str(root.get_by_test_id("position").text_content())


def slide_to(root: Any, index: int) -> None:
    """What a drag ends with: the range input's value changes and it fires input + change."""
    root.get_by_test_id("slider").evaluate(
        """(el, i) => { el.value = String(i); el.dispatchEvent(new Event("input", {bubbles: true}));
                        el.dispatchEvent(new Event("change", {bubbles: true})); }""",
        index,
    )
    expect_position(root, index)


def expect_position(root: Any, index: int) -> None:
    from playwright.sync_api import expect

    expect(root.get_by_test_id("position")).to_have_text(
        re.compile(rf"^index {index:,} / "), timeout=10_000
    )
    expect(root.locator(".ae-value")).to_have_count(1)
    root.page.wait_for_function(
        "([root, i]) => root.querySelector('tr.ae-row.current')?.dataset.index === String(i)",
        arg=[root.element_handle(), index],
        timeout=10_000,
    )


def test_chart_renders_with_the_initial_state_highlighted(
    nb: NotebookPage, tmp_path: Path
) -> None:
    root = nb.widget(0)
    svg = root.locator("svg.ae-svg")
    assert svg.count() == 1
    assert (
        root.locator("svg g.node.state").count() == 6
        and root.locator("svg g.cluster").count() == 3
    )
    assert active_labels(root) == ["idle"]
    assert (
        root.locator("svg g.edge.initial.taken").count() == 1
    )  # the root's initial arrow
    assert root.get_by_test_id("state-value").text_content() == "idle"
    assert root.get_by_test_id("verify-status").text_content() == "verified"
    nb.shot(tmp_path / "initial.png", 0)
    # zoom and fit change only the viewBox; the drawing (and its highlight) stays the same element
    fitted = svg.get_attribute("viewBox")
    handle = svg.element_handle()
    root.get_by_role("button", name="Zoom in").click()
    zoomed = str(svg.get_attribute("viewBox"))
    assert float(zoomed.split()[2]) < float(str(fitted).split()[2])
    root.get_by_role("button", name="Show the whole chart").click()
    assert svg.get_attribute("viewBox") == fitted
    assert svg.element_handle().evaluate("(el, old) => el === old", handle)


def test_moving_the_slider_changes_highlight_and_context(
    nb: NotebookPage, tmp_path: Path
) -> None:
    root = nb.widget(0)
    drawn = root.locator("svg.ae-svg").element_handle()
    slide_to(root, 2)
    assert active_labels(root) == ["ok", "writing"]
    # scrubbing toggled classes on the drawn chart; it did not lay it out again
    assert (
        root.locator("svg.ae-svg")
        .element_handle()
        .evaluate("(el, old) => el === old", drawn)
    )
    taken = root.locator("svg g.edge.taken text").all_text_contents()
    assert taken == ["START"]
    assert root.locator("svg g.cluster.active").count() == 3  # working and both regions
    slide_to(root, 4)
    changed = root.locator(".ae-json .changed")
    assert changed.count() == 1 and changed.text_content() == "n: 2"
    # a context branch the user folds stays folded while scrubbing
    owner = root.locator('.ae-json details[data-path=\'["context","owner"]\']')
    assert owner.evaluate("el => el.open") is True
    owner.locator("summary").first.click()
    slide_to(root, 3)
    assert (
        root.locator('.ae-json details[data-path=\'["context","owner"]\']').evaluate(
            "el => el.open"
        )
        is False
    )
    slide_to(root, 4)
    # the slider move is visible from Python
    assert nb.kernel("print(ex.index, ex.snapshot.context['n'])").strip() == "4 2"
    nb.shot(tmp_path / "index4.png", 0)


def test_python_moves_the_view(nb: NotebookPage, tmp_path: Path) -> None:
    root = nb.widget(0)
    nb.kernel("ex.index = 6")
    expect_position(root, 6)
    assert active_labels(root) == ["ok", "review"]
    assert "160" in str(root.get_by_test_id("usage").text_content())


def test_clicking_a_table_row_jumps(nb: NotebookPage, tmp_path: Path) -> None:
    root = nb.widget(0)
    root.locator('tr.ae-row[data-index="8"]').click()
    expect_position(root, 8)
    assert active_labels(root) == ["done"]
    assert root.get_by_test_id("event-type").text_content() == "APPROVE"
    assert nb.kernel("print(ex.index)").strip() == "8"


def test_arrow_keys_step_the_index_inside_jupyterlab(nb: NotebookPage) -> None:
    root = nb.widget(0)
    page = nb.page
    root.locator('tr.ae-row[data-index="3"]').click()
    expect_position(root, 3)
    active_cell = "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex"
    cell_before = page.evaluate(active_cell)
    root.get_by_test_id("position").click()  # focus the widget, not an input
    page.keyboard.press("ArrowRight")
    expect_position(root, 4)
    page.keyboard.press("ArrowDown")  # in command mode this would select the next cell
    expect_position(root, 5)
    page.keyboard.press("ArrowLeft")
    expect_position(root, 4)
    page.keyboard.press("End")
    expect_position(root, 8)
    assert page.evaluate(active_cell) == cell_before, (
        "JupyterLab must not see the arrows"
    )


def test_tampered_log_shows_the_divergence_banner(
    nb: NotebookPage, tmp_path: Path
) -> None:
    root = nb.widget(1)
    banner = root.get_by_test_id("divergence")
    assert banner.is_visible()
    text = str(banner.text_content())
    assert (
        "Replay diverges at index 4" in text
        and "NOTE" in text
        and "4 further divergent entries" in text
    )
    assert root.get_by_test_id("verify-status").text_content() == "5 divergent"
    assert root.locator(".ae-track .ae-mark.divergent").count() == 1
    nb.shot(tmp_path / "divergence.png", 1)
    banner.get_by_test_id("jump-divergence").click()
    expect_position(root, 4)
    assert root.get_by_test_id("hash-status").text_content() == "hash mismatch"
    assert nb.widget(0).get_by_test_id("divergence").is_hidden()
    machines = root.get_by_test_id("machines")
    assert "part ways at index 1" in str(
        machines.text_content()
    ) and "context.n" in str(machines.text_content())
    machines.get_by_test_id("jump-machines").click()
    expect_position(root, 1)


def test_untrusted_payload_shows_as_text_and_no_dialog_fires(
    nb: NotebookPage, tmp_path: Path
) -> None:
    root = nb.widget(0)
    root.locator('tr.ae-row[data-index="1"]').click()
    expect_position(root, 1)
    assert XSS in str(
        root.locator('tr.ae-row[data-index="1"] td.ae-payload').text_content()
    )
    root.locator(".ae-event-json summary").click()
    assert XSS in str(root.get_by_test_id("event-json").text_content())
    assert root.locator(".ae-json").get_by_text(f'"{XSS}"').count() == 1
    assert (
        root.locator("img").count() == 0
        and nb.page.locator(".jp-OutputArea img[src='x']").count() == 0
    )
    nb.page.wait_for_timeout(300)  # an onerror handler would have fired by now
    assert nb.dialogs == []
    nb.shot(tmp_path / "xss.png", 0)


def test_dark_theme_is_readable(nb: NotebookPage, tmp_path: Path) -> None:
    root = nb.widget(0)
    light = root.evaluate("el => getComputedStyle(el).backgroundColor")
    nb.page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})"
    )
    nb.page.wait_for_function(
        "(before) => getComputedStyle(document.querySelector('.ae-root')).backgroundColor !== before",
        arg=light,
        timeout=20_000,
    )
    nb.page.wait_for_function(
        "() => !document.querySelector('#jupyterlab-splash')", timeout=20_000
    )
    dark = root.evaluate("el => getComputedStyle(el).backgroundColor")
    text = root.locator(".ae-title").evaluate("el => getComputedStyle(el).color")
    assert dark != light and text != "rgb(0, 0, 0)"
    nb.shot(tmp_path / "dark.png", 0)
    nb.page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})"
    )
    nb.page.wait_for_function(
        "() => !document.querySelector('#jupyterlab-splash')", timeout=20_000
    )


def test_play_runs_to_the_end(nb: NotebookPage) -> None:
    root = nb.widget(0)
    nb.kernel("ex.index = 0")
    expect_position(root, 0)
    root.locator("select[aria-label='Playback speed']").select_option("50")
    root.get_by_test_id("play").click()
    expect_position(root, 8)
    assert nb.kernel("print(ex.index)").strip() == "8"


def test_fork_and_compare_show_both_timelines(nb: NotebookPage, tmp_path: Path) -> None:
    root = nb.widget(0)
    out = nb.kernel(
        "b = ex.fork(at=5)\n"
        "print(b.append({'type': 'CANCEL'}).ignored, b.append({'type': 'APPROVE'}).ignored)\n"
        "print(ex.compare(b).index)"
    )
    assert out.split() == ["False", "True", "5"]
    panel = root.get_by_test_id("compare")
    panel.wait_for(state="visible", timeout=10_000)
    text = str(panel.text_content())
    assert "first differ at index 5" in text and "APPROVE (ignored)" in text
    assert (
        root.locator(".ae-track .ae-mark.fork").count() == 1
    )  # the fork point is on the slider track
    assert (
        panel.get_by_test_id("lane-branch").locator(".ae-lane-mark.diff").count() == 1
    )
    nb.shot(tmp_path / "compare.png", 0)


def test_a_fast_drag_reaches_python_one_index_at_a_time(nb: NotebookPage) -> None:
    """A burst of 40 slider moves is not 40 kernel round trips: the browser holds one index in flight, so
    Python answers each index it is sent (its frame) before the next one arrives, and the last move wins."""
    root = nb.widget(0)
    nb.kernel("ex.index = 0")
    expect_position(root, 0)
    nb.kernel(
        "seen = []\n"
        "ex.observe(lambda change: seen.append(('index', change['new'])), 'index')\n"
        "ex.observe(lambda change: seen.append(('frame', change['new'].get('index'))), 'frame')"
    )
    root.get_by_test_id("slider").evaluate(
        """async (el) => {
            for (let k = 0; k < 40; k++) {
                el.value = String(k % 8 + 1);
                el.dispatchEvent(new Event("input", {bubbles: true}));
                await new Promise((r) => setTimeout(r, 5));
            }
            el.value = "7";
            el.dispatchEvent(new Event("input", {bubbles: true}));
            el.dispatchEvent(new Event("change", {bubbles: true}));
        }"""
    )
    expect_position(root, 7)
    root.page.wait_for_function(
        "(root) => /#7\\b/.test(root.querySelector('.ae-event-line')?.textContent || '')",
        arg=root.element_handle(),
    )
    seen = ast.literal_eval(nb.kernel("print(seen)").strip())
    indices = [v for kind, v in seen if kind == "index"]
    assert indices[-1] == 7 and 1 <= len(indices) < 41, seen
    for (kind, value), (next_kind, next_value) in zip(seen, seen[1:], strict=False):
        if kind == "index":  # each index is answered with its own frame before anything else happens
            assert (next_kind, next_value) == ("frame", value), seen


# Wraps the page's WebSocket.send: which index updates leave the page, and when (synchronously or later).
WATCH_SENDS = r"""() => {
    if (window.__aeSends) return;
    window.__aeSends = [];
    const send = WebSocket.prototype.send;
    WebSocket.prototype.send = function (data) {
        const text = typeof data === "string" ? data : new TextDecoder().decode(data);
        const m = /"method":\s*"update".*?"index":\s*(\d+)/s.exec(text);
        if (m) window.__aeSends.push(Number(m[1]));
        return send.call(this, data);
    };
}"""
MOVE = """(el, i) => { el.value = String(i); el.dispatchEvent(new Event("input", {bubbles: true}));
                   return window.__aeSends.splice(0); }"""


def test_a_drag_sends_the_thumb_at_once_when_python_has_answered(nb: NotebookPage) -> None:
    """Issue 23's frames on time: a move goes to Python in the input event itself whenever the last index sent
    has its frame (the old fixed throttle held every move inside 150 ms of a send back by 60-150 ms); while
    one is in flight, later moves replace each other and only the newest follows the frame."""
    root = nb.widget(0)
    nb.kernel("ex.index = 0")
    expect_position(root, 0)
    nb.page.evaluate(WATCH_SENDS)
    slider = root.get_by_test_id("slider")
    assert slider.evaluate(MOVE, 2) == [2]  # nothing in flight: sent in the same task
    frame_at = "(root) => /#2\\b/.test(root.querySelector('.ae-event-line')?.textContent || '')"
    nb.page.wait_for_function(frame_at, arg=root.element_handle())
    # answered: the next move, well inside 150 ms of the last send, goes at once too
    sent_next = slider.evaluate(
        """(el) => { el.value = "3"; el.dispatchEvent(new Event("input", {bubbles: true}));
                     el.value = "4"; el.dispatchEvent(new Event("input", {bubbles: true}));
                     el.value = "5"; el.dispatchEvent(new Event("input", {bubbles: true}));
                     return window.__aeSends.splice(0); }"""
    )
    assert sent_next == [3], sent_next  # 4 and 5 wait while 3 is in flight
    expect_position(root, 5)
    nb.page.wait_for_function(frame_at.replace("#2", "#5"), arg=root.element_handle())
    assert nb.page.evaluate("() => window.__aeSends.splice(0)") == [5]  # 4 was superseded, never sent


def test_a_highlight_shows_in_the_frame_it_is_drawn(nb: NotebookPage) -> None:
    """No fill/stroke fade on the chart's states: the active colour is there in the first frame after a step
    (a 120 ms transition showed each step's highlight late and repainted the chart for 7+ frames)."""
    root = nb.widget(0)
    root.scroll_into_view_if_needed()
    slide_to(root, 3)
    durations = root.evaluate(
        "(root, shapes) => [...root.querySelectorAll(shapes)].map((el) => getComputedStyle(el).transitionDuration)",
        "svg.ae-svg g.node path, svg.ae-svg g.node polygon, svg.ae-svg g.node ellipse, "
        "svg.ae-svg g.cluster > path, svg.ae-svg g.cluster > polygon",
    )
    assert durations and set(durations) == {"0s"}, sorted(set(durations))


def test_a_recorded_support_agent_run(nb: NotebookPage, tmp_path: Path) -> None:
    """The lead's sample run (tools, models, a decision, a timer): children and owed effects per index."""
    root = nb.widget(2)
    root.scroll_into_view_if_needed()
    root.locator('tr.ae-row[data-index="4"]').click()
    expect_position(root, 4)
    assert root.get_by_test_id("state-value").text_content() == "deciding"
    assert "chooseAction" in str(root.get_by_test_id("state").text_content())
    effects = root.get_by_test_id("effects")
    assert "decision" in str(effects.text_content()) and "chooseAction" in str(
        effects.text_content()
    )
    assert root.locator("svg g.edge.taken").count() >= 1
    # the chart opens whole (laid out top to bottom, the direction that reads larger in this panel) with
    # its smallest label at 9 px or more; test_chart_in_lab.py checks every sample chart the same way
    svg = root.locator("svg.ae-svg")
    assert svg.get_attribute("data-rankdir") == "TB"
    chart = root.locator("svg.ae-svg g.graph").bounding_box()
    stage = root.locator(".ae-graph-stage").bounding_box()
    assert chart and stage
    assert stage["x"] - 1 <= chart["x"] and chart["x"] + chart["width"] <= stage["x"] + stage["width"] + 1
    assert stage["y"] - 1 <= chart["y"] and chart["y"] + chart["height"] <= stage["y"] + stage["height"] + 1
    smallest = svg.evaluate(
        "svg => Math.min(...[...svg.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a))"
    )
    assert smallest >= 9
    nb.shot(tmp_path / "support.png", 2)


def test_a_long_log_verifies_in_the_background_and_updates_the_view(
    nb: NotebookPage,
) -> None:
    """The background thread's results (indexes, verification) reach the browser through the kernel."""
    from playwright.sync_api import expect

    root = nb.widget(3)
    root.scroll_into_view_if_needed()
    expect(root.get_by_test_id("verify-status")).to_have_text(
        "verified", timeout=60_000
    )
    assert (
        root.locator("select[aria-label='Filter by event type'] option").count() == 9
    )  # "all" + 8 event types
    root.get_by_test_id("position").click()
    nb.page.keyboard.press("End")
    expect_position(root, 5000)
    assert root.get_by_test_id("pending").count() == 0
    assert "hash ok" in str(root.get_by_test_id("hash-status").text_content())
    assert "totalTokens" in str(root.get_by_test_id("usage").text_content())


# Order of what the page paints after a jump: each chart class change, each animation frame, each table redraw.
PAINT_ORDER = """(root) => {
    window.__aeOrder = [];
    const note = (what) => window.__aeOrder.push(what);
    // The chart's classes, or the index its highlight is for (with the state track a move whose states are lit
    // already changes no class: the chart then only says it shows the new index).
    new MutationObserver(() => note("chart")).observe(root.querySelector("[data-testid=graph]"),
        { attributes: true, attributeFilter: ["class", "data-lit-index"], subtree: true });
    new MutationObserver(() => note("table")).observe(root.querySelector(".ae-events tbody"), { childList: true });
    const tick = () => { note("frame"); if (window.__aeOrder.length < 400) requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
}"""


def test_a_jump_paints_the_highlight_before_the_table_page(nb: NotebookPage) -> None:
    """Issue 23's frames on time: a jump to another page of a long log sends the frame and the table's page;
    the chart's highlight changes and is painted (an animation frame passes) before the rows are rebuilt, so
    the table's redraw never holds the highlight back."""
    from playwright.sync_api import expect

    root = nb.widget(3)
    root.scroll_into_view_if_needed()
    expect(root.get_by_test_id("verify-status")).to_have_text("verified", timeout=60_000)
    for target in (4321, 1234, 3000):
        root.evaluate(PAINT_ORDER)
        root.get_by_test_id("slider").evaluate(
            """(el, i) => { el.value = String(i); el.dispatchEvent(new Event("input", {bubbles: true}));
                            el.dispatchEvent(new Event("change", {bubbles: true})); }""",
            target,
        )
        expect(root.locator(f'tr.ae-row.current[data-index="{target}"]')).to_have_count(1)
        order = list(nb.page.evaluate("() => window.__aeOrder"))
        assert "chart" in order and "table" in order, order
        chart, table = order.index("chart"), order.index("table")
        assert chart < table and "frame" in order[chart:table], (target, order[: table + 1])


def test_a_hostile_event_type_and_keys_stay_text_everywhere(
    nb: NotebookPage, tmp_path: Path
) -> None:
    root = nb.widget(4)
    root.scroll_into_view_if_needed()
    root.locator('tr.ae-row[data-index="1"]').click()
    expect_position(root, 1)
    assert root.get_by_test_id("event-type").text_content() == XSS
    assert root.locator('tr.ae-row[data-index="1"] td.ae-type').text_content() == XSS
    options = root.locator(
        "select[aria-label='Filter by event type'] option"
    ).all_text_contents()
    assert f"{XSS} (1)" in options
    root.locator(".ae-event-json summary").click()
    assert "<script>alert(2)</script>" in str(
        root.get_by_test_id("event-json").text_content()
    )
    assert root.locator("img, script, iframe, object").count() == 0
    nb.page.wait_for_timeout(300)
    assert nb.dialogs == []
    nb.shot(tmp_path / "hostile.png", 4)


def test_typing_a_search_filters_the_table_and_marks_the_track(
    nb: NotebookPage,
) -> None:
    from playwright.sync_api import expect

    root = nb.widget(0)
    search = root.get_by_role("searchbox", name="Search event payloads")
    search.fill("ignored while")
    expect(root.locator("tr.ae-row")).to_have_count(1, timeout=10_000)
    assert root.locator("tr.ae-row").first.get_attribute("data-index") == "7"
    expect(root.locator(".ae-track .ae-mark.hit")).to_have_count(1)
    nb.page.keyboard.press(
        "a"
    )  # typed into the box, not a notebook shortcut (no cell is inserted)
    assert (
        nb.page.evaluate(
            "() => window.jupyterapp.shell.currentWidget.content.widgets.length"
        )
        == 5
    )
    search.fill("")
    expect(root.locator("tr.ae-row")).to_have_count(9, timeout=10_000)
    expect(root.locator(".ae-track .ae-mark.hit")).to_have_count(0)
