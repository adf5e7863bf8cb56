"""The statechart as a person first sees it, in a real JupyterLab and Chromium at the widget's default size.

For every sample chart (support, research, planner, inbox, the tests' parallel chart) and every explorer the
notebooks display: the whole chart is in the panel, every state's and transition's label renders at
9 px or more, each state's label stays inside its box at rest and when highlighted, and a final state is no
larger than the other states. A chart too large for that opens on its active state with an overview.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import test_explorer_in_lab as explorer_tests
from .conftest import Lab, NotebookPage, browser_page, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).parents[2]
LOGS = ROOT / "sample_logs"
READABLE_PX = 9

SETUP = f"""\
from pathlib import Path
from agent_explorer import read_log
from agent_explorer.engine import setup
from agent_explorer.explorer import Explorer
from agent_explorer.samples import inbox_agent, planner_agent, research_agent, support_agent
from agent_explorer.samples.long_run import long_run_entries
from sample_run import make_machine, record, sample_run
LOGS = Path({str(LOGS)!r})"""

CHARTS = {  # widget name -> the cell that displays it
    "support": "Explorer(support_agent, read_log(LOGS / 'support_clean.jsonl'))",
    "research": "Explorer(research_agent, read_log(LOGS / 'research_race.jsonl'))",
    "planner": "Explorer(planner_agent, read_log(LOGS / 'planner_trip.jsonl'))",
    "inbox": "Explorer(inbox_agent, list(long_run_entries(20)))",
    "parallel": "Explorer(make_machine(), sample_run(make_machine()))",
}

# 40 states in a chain with skips, back edges and two finals: too large to read whole in the panel.
LARGE = """\
def large_machine(n=40):
    states = {}
    for i in range(n):
        on = {f"NEXT_{i}": f"step{i + 1}" if i + 1 < n else "done", "FAIL": "failed"}
        if i % 3 == 0 and i + 3 < n:
            on[f"SKIP_{i}"] = f"step{i + 3}"
        if i % 4 == 1:
            on[f"BACK_{i}"] = f"step{i - 1}"
        states[f"step{i}"] = {"on": on}
    states["done"] = {"type": "final"}
    states["failed"] = {"type": "final"}
    return setup().create_machine({"id": "large", "initial": "step0", "context": {}, "states": states})
large_chart = large_machine()
large = Explorer(large_chart, record(large_chart, [{"type": f"NEXT_{i}"} for i in range(20)]))
large.index = 20
large"""

# Everything the assertions need, measured on screen: label sizes (font size x the SVG's screen scale),
# label and outline boxes of every state at rest and with `active` on it, the chart's and the panel's boxes.
GEOMETRY = """(root) => {
  const svg = root.querySelector("svg.ae-svg");
  const rect = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const union = (boxes) => [Math.min(...boxes.map((b) => b[0])), Math.min(...boxes.map((b) => b[1])),
                            Math.max(...boxes.map((b) => b[2])), Math.max(...boxes.map((b) => b[3]))];
  const px = (t) => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a;
  const texts = (el) => [...el.querySelectorAll("text")].filter((t) => t.textContent.trim());
  const measure = (g) => ({
    id: g.id, cls: g.getAttribute("class"),
    shape: union([...g.querySelectorAll("path, polygon, ellipse")].map(rect)),
    labels: texts(g).map((t) => ({ text: t.textContent, box: rect(t), px: px(t) })),
  });
  const states = [...svg.querySelectorAll("g.node.state")];
  const rest = states.map(measure);
  const active = states.map((g) => {
    const was = g.classList.contains("active");
    g.classList.add("active");
    getComputedStyle(g).fill; // restyle before measuring
    const m = measure(g);
    if (!was) g.classList.remove("active");
    return m;
  });
  return {
    rankdir: svg.dataset.rankdir,
    stage: rect(root.querySelector(".ae-graph-stage")),
    chart: rect(svg.querySelector("g.graph")),
    rest, active,
    edges: [...svg.querySelectorAll("g.edge")].flatMap((g) => texts(g).map((t) => ({ text: t.textContent, px: px(t) }))),
    minimap: !(root.querySelector("[data-testid=minimap]")?.hidden ?? true),
  };
}"""


def inside(inner: list[float], outer: list[float], slack: float = 0.5) -> bool:
    return (
        inner[0] >= outer[0] - slack
        and inner[1] >= outer[1] - slack
        and inner[2] <= outer[2] + slack
        and inner[3] <= outer[3] + slack
    )


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def geometry(root: Any) -> dict[str, Any]:
    root.scroll_into_view_if_needed()
    root.page.wait_for_function(
        "(root) => root.dataset.ready === 'true' && root.querySelector('svg.ae-svg g.node')",
        arg=root.element_handle(),
        timeout=30_000,
    )
    root.page.wait_for_timeout(300)  # the first view is decided once the output is laid out and visible
    return dict(root.evaluate(GEOMETRY))


def assert_readable_whole_chart(g: dict[str, Any], name: str) -> None:
    """The brief's four points, with what failed named."""
    assert inside(g["chart"], g["stage"], slack=1), f"{name}: the chart {g['chart']} is not all in the panel {g['stage']}"
    small = [(lab["text"], round(lab["px"], 1)) for n in g["rest"] for lab in n["labels"] if lab["px"] < READABLE_PX]
    small += [(e["text"], round(e["px"], 1)) for e in g["edges"] if e["px"] < READABLE_PX]
    assert small == [], f"{name}: labels under {READABLE_PX} px: {small}"
    assert not g["minimap"], f"{name}: the whole chart is in view, the overview should be hidden"
    assert_labels_fit(g, name)
    assert_finals_no_larger(g, name)


def assert_labels_fit(g: dict[str, Any], name: str) -> None:
    for state in ("rest", "active"):
        out = [
            (lab["text"], [round(v) for v in lab["box"]], [round(v) for v in n["shape"]])
            for n in g[state]
            for lab in n["labels"]
            if not inside(lab["box"], n["shape"])
        ]
        assert out == [], f"{name}: labels crossing their state's border ({state}): {out}"


def assert_finals_no_larger(g: dict[str, Any], name: str) -> None:
    """As tall as the median state, and no wider than its label plus a typical state's padding."""
    def size(n: dict[str, Any]) -> tuple[float, float]:
        return n["shape"][2] - n["shape"][0], n["shape"][3] - n["shape"][1]

    def label_width(n: dict[str, Any]) -> float:
        return max(lab["box"][2] - lab["box"][0] for lab in n["labels"])

    plain = [n for n in g["rest"] if "atomic" in n["cls"] and n["labels"]]
    finals = [n for n in g["rest"] if "final" in n["cls"]]
    padding = median([size(n)[0] - label_width(n) for n in plain])
    height = median([size(n)[1] for n in plain])
    for n in finals:
        width, tall = size(n)
        assert tall <= height + 0.5, f"{name}: final {n['labels'][0]['text']} is {tall:.1f} px tall, states {height:.1f}"
        assert width <= label_width(n) + padding + 1, f"{name}: final {n['labels'][0]['text']} is {width:.1f} px wide"


@pytest.fixture(scope="module")
def nb(notebook_page: NotebookPage, lab: Lab) -> Iterator[NotebookPage]:
    write_notebook(lab.root / "charts.ipynb", [SETUP, *CHARTS.values(), LARGE])
    notebook_page.open("charts.ipynb", widgets=len(CHARTS) + 1)
    yield notebook_page
    assert notebook_page.dialogs == [], f"a dialog fired: {notebook_page.dialogs}"


@pytest.mark.parametrize("name", list(CHARTS))
def test_a_sample_chart_opens_whole_and_readable(nb: NotebookPage, name: str, tmp_path: Path) -> None:
    root = nb.widget(list(CHARTS).index(name))
    g = geometry(root)
    assert_readable_whole_chart(g, name)
    nb.shot(tmp_path / f"{name}.png", list(CHARTS).index(name))


def test_the_highlight_keeps_labels_in_their_boxes_while_scrubbing(nb: NotebookPage) -> None:
    """The real highlight (Python moves the index): the lit states' labels stay inside their borders, the
    drawing is the same element in the same direction (classes toggle, nothing is laid out again)."""
    root = nb.widget(0)
    svg = root.locator("svg.ae-svg")
    drawn = svg.element_handle()
    rankdir = svg.get_attribute("data-rankdir")
    seen = set()
    for index in (0, 1, 3, 4, 6, 8, 10, 11):
        explorer_tests.slide_to(root, index)
        root.page.wait_for_function(  # the frame Python sent is drawn: the chart lights the state named
            """(root) => root.querySelector("svg.ae-svg g.node.active text")?.textContent
                         === root.querySelector("[data-testid=state-value]").textContent""",
            arg=root.element_handle(),
            timeout=10_000,
        )
        lit = root.evaluate(
            """(root) => [...root.querySelectorAll("svg.ae-svg g.node.active")].map((g) => {
                const r = (el) => { const b = el.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
                return { text: g.querySelector("text").textContent, label: r(g.querySelector("text")),
                         shape: r(g.querySelector("path, polygon, ellipse")) }; })"""
        )
        for node in lit:
            seen.add(node["text"])
            assert inside(node["label"], node["shape"]), (index, node)
    assert {"awaitingApproval", "lookingUpOrder", "refunding", "resolved"} <= seen
    assert svg.element_handle().evaluate("(el, old) => el === old", drawn)
    assert svg.get_attribute("data-rankdir") == rankdir


def test_a_shared_self_loop_marks_only_the_line_of_the_transition_taken(nb: NotebookPage) -> None:
    """research's six targetless completions share one loop; at each completion only its own line is lit."""
    root = nb.widget(list(CHARTS).index("research"))
    root.scroll_into_view_if_needed()
    for index, label in ((3, "done: branch2"), (5, "done: branch0"), (7, "done: branch1")):
        explorer_tests.slide_to(root, index)
        root.page.wait_for_function(
            "([root, label]) => [...root.querySelectorAll('svg.ae-svg g.edge.loop.taken text.taken-line')]"
            ".map((t) => t.textContent).join() === label",
            arg=[root.element_handle(), label],
            timeout=10_000,
        )
        loop = root.locator("svg.ae-svg g.edge.loop")
        assert loop.count() == 1 and loop.locator("text").count() == 6
    explorer_tests.slide_to(root, 1)  # the outline's completion: the loop is not taken, no line stays lit
    root.page.wait_for_function(
        "(root) => !root.querySelector('svg.ae-svg .taken-line, svg.ae-svg g.edge.loop.taken')",
        arg=root.element_handle(),
        timeout=10_000,
    )


# A page whose chart labels come out wider than the Helvetica/Arial metrics Graphviz sized the boxes for (as on
# a system without Helvetica, Arial or Liberation Sans): DejaVu Sans Bold is about 20% wider.
WIDE_FONT = """document.addEventListener("DOMContentLoaded", () => {
  const style = document.createElement("style");
  style.textContent = '.ae-svg text { font-family: "DejaVu Sans" !important; font-weight: 700 !important; }';
  document.head.appendChild(style);
});"""


def test_labels_in_a_wider_fallback_font_are_narrowed_to_their_boxes(
    nb: NotebookPage, browser: Any, lab: Lab
) -> None:
    target = lab.root / "wide-font.html"
    nb.kernel(f"Explorer(support_agent, read_log(LOGS / 'support_clean.jsonl')).to_html({str(target)!r})")
    context = browser.new_context(viewport={"width": 1000, "height": 1200}, device_scale_factor=1)
    try:
        page = context.new_page()
        page.add_init_script(WIDE_FONT)
        page.goto(target.as_uri())
        root = page.locator(".ae-root")
        g = geometry(root)
        family = root.locator("svg.ae-svg g.node text").first.evaluate("t => getComputedStyle(t).fontFamily")
        assert "DejaVu" in family
        narrowed = root.locator("svg.ae-svg g.node text[textLength]").all_text_contents()
        assert "awaitingApproval" in narrowed  # its box was sized for the narrower font
        assert_labels_fit(g, "support in DejaVu Sans Bold")
    finally:
        context.close()


def test_a_chart_too_large_to_read_whole_opens_on_its_active_state_with_an_overview(
    nb: NotebookPage, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    root = nb.widget(len(CHARTS))
    g = geometry(root)
    assert not inside(g["chart"], g["stage"], slack=1), "a 40-state chain should not fit whole at 9 px"
    active = [n for n in g["rest"] if n["labels"] and n["labels"][0]["text"] == "step20"]
    assert active and inside(active[0]["shape"], g["stage"]), "the active state is in view"
    assert min(lab["px"] for n in g["rest"] for lab in n["labels"]) >= READABLE_PX
    assert g["minimap"], "the overview shows where the view is"
    minimap = root.get_by_test_id("minimap")
    assert minimap.locator("rect.ae-minimap-frame").count() == 1
    assert minimap.locator("g.ae-mm-node.ae-mm-active").count() == 1  # the active state is marked there too
    assert minimap.locator("g.node, g.edge, g.cluster, text").count() == 0  # the chart's selectors never see it
    assert minimap.locator("[id]").count() == 0  # the copy duplicates no id of the page
    nb.shot(tmp_path / "large.png", len(CHARTS))
    # the overview moves the view: click its top-left corner
    svg = root.locator("svg.ae-svg")
    before = str(svg.get_attribute("viewBox"))
    box = minimap.bounding_box()
    assert box
    nb.page.mouse.click(box["x"] + 6, box["y"] + 6)
    after = str(svg.get_attribute("viewBox"))
    assert after != before and float(after.split()[1]) < float(before.split()[1])
    # the way out: the whole chart, after which the overview has nothing to show
    root.get_by_role("button", name="Show the whole chart").click()
    whole = dict(root.evaluate(GEOMETRY))
    assert inside(whole["chart"], whole["stage"], slack=1)
    expect(minimap).to_be_hidden()
    root.get_by_role("button", name="Zoom in").click()
    expect(minimap).to_be_visible()
    # scrubbing far away: the view follows the active state (its box measured once, compared on each step)
    for _ in range(3):
        root.get_by_role("button", name="Zoom in").click()
    for index, name in ((0, "step0"), (20, "step20")):
        before = str(svg.get_attribute("viewBox"))
        explorer_tests.slide_to(root, index)
        root.page.wait_for_function(
            "([root, name]) => root.querySelector('svg.ae-svg g.node.active text')?.textContent === name",
            arg=[root.element_handle(), name],
            timeout=10_000,
        )
        moved = dict(root.evaluate(GEOMETRY))
        lit = [n for n in moved["rest"] if n["labels"] and n["labels"][0]["text"] == name]
        assert lit and inside(lit[0]["shape"], moved["stage"]), f"{name} is in view after the slide"
        assert str(svg.get_attribute("viewBox")) != before, f"the view moved to {name}"


CURRENT_ROW_IN_VIEW = """(root) => {
  const scroller = root.querySelector(".ae-table-scroll");
  const row = scroller && scroller.querySelector("tr.current");
  if (!row) return !!scroller;  // the cursor's row is on another page of the table: nothing to show here
  const view = scroller.getBoundingClientRect(), at = row.getBoundingClientRect();
  const head = scroller.querySelector("thead").getBoundingClientRect().height;
  return at.top >= view.top + head - 1 && at.bottom <= view.bottom + 1;
}"""

NOTEBOOKS = {
    "01_explore_a_run.ipynb": 2,  # the support run and the 100,001-entry inbox run
    "02_teaching_replay.ipynb": 1,
    "03_postmortem.ipynb": 1,
    "04_what_if.ipynb": 1,
    "05_record_your_own_agent.ipynb": 1,
    "06_follow_a_live_run.ipynb": 1,
    "07_triage_a_store.ipynb": 2,  # the run list and the run it opens under it
}


@pytest.fixture(scope="module")
def notebooks(lab: Lab) -> Path:
    """The notebooks and sample logs copied under the lab's root: Run All never touches the checkout."""
    shutil.copytree(ROOT / "notebooks", lab.root / "notebooks", dirs_exist_ok=True)
    shutil.copytree(LOGS, lab.root / "sample_logs", dirs_exist_ok=True)
    return lab.root / "notebooks"


@pytest.mark.parametrize("name", list(NOTEBOOKS))
def test_each_notebooks_explorer_opens_whole_and_readable(
    browser: Any, lab: Lab, notebooks: Path, name: str, tmp_path: Path
) -> None:
    """Each notebook after Run All, in its own browser page at the same size as every browser test's."""
    with browser_page(browser) as fresh:
        notebook = NotebookPage(fresh, lab)
        notebook.open(f"notebooks/{name}", widgets=NOTEBOOKS[name])
        notebook.page.wait_for_function(
            """() => { const w = window.jupyterapp.shell.currentWidget;
                return w.content.widgets.every((c) => c.model.type !== "code" || c.model.executionCount)
                  && w.sessionContext.session.kernel.status === "idle"; }""",
            timeout=180_000,
        )
        # The explorers among the widgets (notebook 07 also shows a run list, which draws no chart).
        explorers = notebook.page.locator(".ae-root:not(.ae-runs)")
        assert explorers.count() >= 1
        for n in range(explorers.count()):
            g = geometry(explorers.nth(n))
            assert_readable_whole_chart(g, f"{name} widget {n}")
            # The events table shows the cursor's row whole, below its sticky header, even when the cells below
            # moved the cursor while the widget was out of view (notebook 01's long run rests at index 123).
            notebook.page.wait_for_function(CURRENT_ROW_IN_VIEW, arg=explorers.nth(n).element_handle(), timeout=10_000)
            explorers.nth(n).screenshot(path=str(tmp_path / f"{name}-{n}.png"))
        assert notebook.dialogs == []
        notebook.page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
