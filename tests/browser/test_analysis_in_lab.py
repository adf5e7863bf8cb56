"""Coverage heatmap, search panel, usage ledger and the static export, in real JupyterLab / headless Chromium.

One notebook (the sample run, and a longer run for the windowed export); one module-scoped session. The
static export is opened from file:// with every network request refused, to prove it needs none.
Screenshots land in each test's tmp_path (light and dark).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import Lab, NotebookPage, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SETUP = """\
from sample_run import long_events, make_machine, record, sample_run
from agent_explorer.explorer import Explorer
machine = make_machine()
ex = Explorer(machine, sample_run(machine))
ex"""
LONG = """\
long = Explorer(machine, record(machine, long_events(600)))
long"""


@pytest.fixture(scope="module")
def nb(notebook_page: NotebookPage, lab: Lab) -> Iterator[NotebookPage]:
    write_notebook(lab.root / "analysis.ipynb", [SETUP, LONG])
    notebook_page.open("analysis.ipynb", widgets=2)
    yield notebook_page
    assert notebook_page.dialogs == [], f"a dialog fired: {notebook_page.dialogs}"


def position(root: Any) -> str:
    return str(root.get_by_test_id("position").text_content())


def wait_position(page: Any, root: Any, index: int) -> None:
    page.wait_for_function(
        "([el, i]) => el.querySelector('[data-testid=position]').textContent.startsWith(`index ${i} `)",
        arg=[root.element_handle(), index],
        timeout=15_000,
    )


def dark_and_back(nb: NotebookPage, shot: Path, n: int = 0) -> None:
    """Screenshot widget `n` under JupyterLab Dark, then restore Light."""
    light = nb.widget(n).evaluate("el => getComputedStyle(el).backgroundColor")
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
    nb.widget(n).scroll_into_view_if_needed()
    nb.shot(shot, n)
    nb.page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})"
    )
    nb.page.wait_for_function(
        "(before) => getComputedStyle(document.querySelector('.ae-root')).backgroundColor === before",
        arg=light,
        timeout=20_000,
    )


def test_coverage_toggle_draws_a_heatmap_with_never_taken_transitions_marked(
    nb: NotebookPage, tmp_path: Path
) -> None:
    root = nb.widget(0)
    root.scroll_into_view_if_needed()
    toggle = root.get_by_test_id("coverage-toggle")
    toggle.click()  # asks Python for the counts the first time
    root.locator("svg.ae-svg.ae-coverage").wait_for(timeout=15_000)
    legend = root.get_by_test_id("coverage-legend")
    assert "8/11 transitions taken" in str(legend.text_content())
    never = root.get_by_test_id("coverage-never").text_content() or ""
    assert all(label in never for label in ("CANCEL", "after 500ms", "REVISE"))
    # The three never-taken transitions are dashed on the chart; the never-entered history state too.
    assert root.locator("svg g.edge.ae-cov-never").count() == 3
    never_nodes = root.locator("svg g.node.ae-cov-never text").all_text_contents()
    assert never_nodes == ["H*"]
    # Hovering says how often: the tooltips of the drawn elements carry the counts while the heatmap is on.
    tips = root.locator("svg g.edge a").evaluate_all(
        "els => els.map(a => a.getAttribute('xlink:title'))"
    )
    assert "CANCEL · never taken" in tips and "START · taken 1×" in tips
    hot = root.locator("svg g.edge.ae-cov-4").count()
    assert hot >= 5
    dash = root.locator("svg g.edge.ae-cov-never path").first.evaluate(
        "el => getComputedStyle(el).strokeDasharray"
    )
    assert dash not in ("", "none")
    # Python-side coverage of more logs redraws the same chart (no re-layout): CANCEL becomes taken.
    assert (
        nb.kernel("print(len(ex.coverage([ex.entries, long.entries])))").strip() == "21"
    )
    # The long run cancels and revises: only the 500 ms timer was never taken in either log.
    nb.page.wait_for_function(
        "el => el.querySelectorAll('svg g.edge.ae-cov-never').length === 1",
        arg=root.element_handle(),
        timeout=15_000,
    )
    assert "after 500ms" in (root.get_by_test_id("coverage-never").text_content() or "")
    nb.shot(tmp_path / "coverage-light.png", 0)
    dark_and_back(nb, tmp_path / "coverage-dark.png")
    toggle.click()
    assert (
        root.locator("svg.ae-svg.ae-coverage").count() == 0
        and root.locator("svg g.ae-cov-never").count() == 0
    )
    tips = root.locator("svg g.edge a").evaluate_all(
        "els => els.map(a => a.getAttribute('xlink:title'))"
    )
    assert "START" in tips and not any("×" in t for t in tips)


def test_search_panel_finds_payloads_and_contexts_and_jumps(
    nb: NotebookPage, tmp_path: Path
) -> None:
    root = nb.widget(0)
    root.get_by_test_id("search-text").fill("onerror")
    hits = root.get_by_test_id("search-hits").locator("li")
    hits.nth(1).wait_for(timeout=15_000)
    assert hits.count() == 2
    texts = hits.all_text_contents()
    assert (
        "event.text" in texts[0]
        and "context.notes[0]" in texts[1]
        and "1–8" in texts[1]
    )
    # The hostile payload is shown as text, not markup.
    assert root.get_by_test_id("search-hits").locator("img").count() == 0
    assert "<img src=x onerror=alert(1)>" in texts[0]
    assert root.locator(".ae-track .ae-mark.hit").count() == 1
    assert (
        root.locator(".ae-track .ae-mark.hit-range").get_attribute("title")
        == "context matches: 1–8"
    )
    hits.nth(1).click()
    wait_position(nb.page, root, 1)
    # A search run from Python shows its query and hits in the same panel.
    nb.kernel('hits = ex.search("req-[36]", regex=True, path="event.requestId")')
    nb.page.wait_for_function(
        "el => el.querySelector('[data-testid=search-summary]').textContent.includes('of 2 hits')",
        arg=root.element_handle(),
        timeout=15_000,
    )
    assert root.get_by_test_id("search-regex").is_checked()
    assert root.get_by_test_id("search-path").input_value() == "event.requestId"
    assert root.locator(".ae-track .ae-mark.hit").count() == 2
    root.get_by_test_id("search-hits").locator("li").nth(1).click()
    wait_position(nb.page, root, 6)
    assert nb.kernel("print(ex.index, [int(h) for h in hits])").strip() == "6 [3, 6]"
    # A bad regex is reported in the panel, not as a kernel traceback.
    root.get_by_test_id("search-path").fill("")
    root.get_by_test_id("search-text").fill("(")
    root.get_by_test_id("search-text").press("Enter")
    summary = root.get_by_test_id("search-summary")
    nb.page.wait_for_function(
        "el => el.textContent.includes('regular expression')",
        arg=summary.element_handle(),
        timeout=15_000,
    )
    nb.shot(tmp_path / "search.png", 0)


def test_usage_ledger_plots_models_and_lists_states(
    nb: NotebookPage, tmp_path: Path
) -> None:
    root = nb.widget(0)
    root.get_by_test_id("usage-ledger").click()
    table = root.get_by_test_id("usage-by-state").locator("tbody tr")
    table.nth(1).wait_for(timeout=15_000)
    rows = table.all_text_contents()
    assert (
        len(rows) == 2
        and "review" in rows[0]
        and rows[0].endswith("120")
        and "writing" in rows[1]
    )
    assert sorted(
        root.get_by_test_id("usage-legend").locator(".ae-usage-key").all_text_contents()
    ) == ["all models", "large", "small"]
    assert root.locator(".ae-usage svg path.ae-model-line").count() == 2
    # A branch forked before the second model call: asking again draws its cumulative line beside the run's.
    assert nb.kernel("print(ex.fork(at=5).forked_at)").strip() == "5"
    root.get_by_test_id("usage-ledger").click()
    root.locator(".ae-usage svg path.ae-branch-line").wait_for(timeout=15_000)
    keys = (
        root.get_by_test_id("usage-legend").locator(".ae-usage-key").all_text_contents()
    )
    # the run's total line, one line per model, then the branch's total: every line has its legend key
    assert len(keys) == 4 and keys[0] == "all models" and keys[-1].endswith("(total)")
    nb.shot(tmp_path / "usage.png", 0)


def open_offline(browser: Any, path: Path) -> tuple[Any, Any, list[str]]:
    """A fresh page on file://path that refuses every request except the file itself."""
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    refused: list[str] = []

    def guard(route: Any) -> None:
        if route.request.url.startswith("file://") or route.request.url.startswith(
            "blob:"
        ):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    context.route("**/*", guard)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(path.as_uri())
    page.wait_for_selector('.ae-root[data-ready="true"]', timeout=30_000)
    return context, page, errors + refused


def test_static_export_opens_from_a_file_and_scrubs_without_a_server(
    nb: NotebookPage, browser: Any, lab: Lab, tmp_path: Path
) -> None:
    target = lab.root / "postmortem.html"
    nb.kernel(
        f"ex.index = 2; ex.coverage([ex.entries, long.entries]); ex.to_html({str(target)!r})"
    )
    context, page, problems = open_offline(browser, target)
    try:
        root = page.locator(".ae-root")
        assert position(root).startswith("index 2 / 8")
        assert "every index is here" in str(
            page.get_by_test_id("static-note").text_content()
        )
        labels = lambda: sorted(
            root.locator("svg g.node.active text").all_text_contents()
        )
        assert "writing" in labels()
        root.click(position={"x": 5, "y": 5})
        page.keyboard.press("End")
        wait_position(page, root, 8)
        assert labels() == ["done"]
        assert "APPROVE" in str(
            root.get_by_test_id("events").locator("tr.current").text_content()
        )
        page.keyboard.press("ArrowLeft")
        wait_position(page, root, 7)
        # The heatmap and the ledger were exported with the data; the search runs in the page.
        root.get_by_test_id("coverage-toggle").click()
        # As computed in the notebook (this log and the long one): only the 500 ms timer never fired.
        assert root.locator("svg g.edge.ae-cov-never").count() == 1
        root.get_by_test_id("search-text").fill("draft ready")
        root.get_by_test_id("search-text").press("Enter")
        root.get_by_test_id("search-hits").locator("li").first.wait_for(timeout=10_000)
        root.get_by_test_id("search-hits").locator("li").first.click()
        wait_position(page, root, 5)
        page.screenshot(path=str(tmp_path / "static.png"), full_page=True)
        light = root.evaluate("el => getComputedStyle(el).backgroundColor")
        page.emulate_media(
            color_scheme="dark"
        )  # the page supplies JupyterLab's dark theme variables
        dark = root.evaluate("el => getComputedStyle(el).backgroundColor")
        assert light == "rgb(255, 255, 255)" and dark == "rgb(17, 17, 17)"
        page.screenshot(path=str(tmp_path / "static-dark.png"), full_page=True)
        assert problems == [], problems
    finally:
        context.close()


def test_static_export_of_a_window_keeps_the_slider_inside_it(
    nb: NotebookPage, browser: Any, lab: Lab
) -> None:
    target = lab.root / "window.html"
    nb.kernel(f"long.to_html({str(target)!r}, start=100, stop=140)")
    context, page, problems = open_offline(browser, target)
    try:
        root = page.locator(".ae-root")
        assert position(root).startswith("index 100 / 600")
        assert re.search(
            r"indices 100–140 of a 601-entry log",
            str(page.get_by_test_id("static-note").text_content()),
        )
        # What the page does not hold is shaded on the track, so the slider's snap back is expected.
        outside = root.locator(".ae-mark.outside")
        assert [outside.nth(i).get_attribute("title") for i in range(outside.count())] == [
            "indices 0–99: not in this export", "indices 141–600: not in this export"]
        track = root.get_by_test_id("track").bounding_box()
        before, after = outside.nth(0).bounding_box(), outside.nth(1).bounding_box()
        assert track and before and after
        assert abs(before["width"] / track["width"] - 100 / 600) < 0.01
        assert abs(after["x"] - track["x"] - track["width"] * 140 / 600) < 2
        assert abs(after["width"] / track["width"] - 460 / 600) < 0.01
        root.click(position={"x": 5, "y": 5})
        page.keyboard.press("End")  # the last index exported, not the log's
        wait_position(page, root, 140)
        page.keyboard.press("Home")
        wait_position(page, root, 100)
        assert problems == [], problems
    finally:
        context.close()


# -- a notebook saved with widget state, rendered by nbconvert -----------------------------------------------
# nbconvert's HTML loads three scripts from CDNs: require.js (cdnjs), @jupyter-widgets/html-manager's
# embed-amd.js (unpkg) and the widget's own module, anywidget's AMD build (jsdelivr). anywidget's AnyModel then
# imports the widget's `_esm` (our whole bundle, saved in the widget state) from a blob URL. The test plays the
# CDNs' part with the same npm packages (fetched once with `npm pack`), so it needs no network at run time.
CDN_PACKAGES = {
    "anywidget": "0.11.0",
    "@jupyter-widgets/html-manager": "1.0.15",
    "requirejs": "2.3.7",
}


@pytest.fixture(scope="module")
def cdn(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import shutil
    import subprocess
    import tarfile

    root = tmp_path_factory.mktemp("cdn")
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not on PATH")
    for name, version in CDN_PACKAGES.items():
        done = subprocess.run(
            [npm, "pack", f"{name}@{version}", "--silent"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(
                f"npm pack {name}@{version} failed (no registry?): {done.stderr[-300:]}"
            )
        with tarfile.open(root / done.stdout.strip().splitlines()[-1]) as archive:
            archive.extractall(root / name.replace("/", "+"), filter="data")
    return root


def _serve_cdns(cdn: Path, served: list[str], refused: list[str]) -> Any:
    files = {
        r"cdnjs\.cloudflare\.com/ajax/libs/require\.js/[^/]+/require(\.min)?\.js$": cdn
        / "requirejs/package/require.js",
        r"/@jupyter-widgets/html-manager@[^/]+/dist/embed-amd\.js$": cdn
        / "@jupyter-widgets+html-manager/package/dist/embed-amd.js",
        r"/npm/anywidget@[^/]+/dist/index\.js$": cdn
        / "anywidget/package/dist/index.js",
    }

    def route(request_route: Any) -> None:
        url = request_route.request.url
        if url.startswith(("file://", "blob:", "data:")):
            request_route.continue_()
            return
        for pattern, path in files.items():
            if re.search(pattern, url):
                served.append(url)
                request_route.fulfill(path=str(path), content_type="text/javascript")
                return
        refused.append(url)  # MathJax and anything else: the page must not need them
        request_route.abort()

    return route


def _offline(refused: list[str]) -> Any:
    def route(request_route: Any) -> None:
        if request_route.request.url.startswith(("file://", "blob:")):
            request_route.continue_()
        else:
            refused.append(request_route.request.url)
            request_route.abort()

    return route


def test_a_notebook_saved_with_widget_state_renders_the_chart_after_nbconvert(
    browser: Any, cdn: Path, tmp_path: Path
) -> None:
    import nbclient
    import nbformat
    from nbconvert import HTMLExporter

    here = Path(__file__).resolve().parents[1] / "explorer"
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                f"import sys; sys.path.insert(0, {str(here)!r})\n"
                "from sample_run import make_machine, sample_run\nfrom agent_explorer.explorer import Explorer\n"
                "machine = make_machine()\nex = Explorer(machine, sample_run(machine))\nex.index = 5\nex.search('draft')\n"
                # In a kernel the frame follows the cursor on the next event-loop turn; yield it inside the cell so
                # nbclient records that update before the cell ends (JupyterLab's own "save widget state" needs not).
                "import asyncio\nawait asyncio.sleep(0)\nex"
            )
        ]
    )
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbclient.NotebookClient(
        notebook, timeout=120, kernel_name="python3", store_widget_state=True
    ).execute()
    state = notebook.metadata["widgets"]["application/vnd.jupyter.widget-state+json"][
        "state"
    ]
    model = next(m for m in state.values() if m["model_name"] == "AnyModel")
    assert model["state"]["index"] == 5 and model["state"]["frame"]["index"] == 5
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(notebook)
    page_path = tmp_path / "saved.html"
    page_path.write_text(body, encoding="utf-8")

    for online in (True, False):
        served: list[str] = []
        refused: list[str] = []
        context = browser.new_context(viewport={"width": 1300, "height": 1000})
        if online:
            context.route("**/*", _serve_cdns(cdn, served, refused))
        else:
            context.route("**/*", _offline(refused))
        page = context.new_page()
        try:
            page.goto(page_path.as_uri())
            if online:
                page.wait_for_selector('.ae-root[data-ready="true"]', timeout=30_000)
                root = page.locator(".ae-root")
                # The saved state: the cursor at 5 (DONE moved the draft to review), the search hits listed.
                assert position(root).startswith("index 5 / 8")
                assert (
                    "review"
                    in root.locator("svg g.node.active text").all_text_contents()
                )
                assert root.get_by_test_id("search-hits").locator("li").count() >= 1
                assert len(served) == 3, served
                page.screenshot(path=str(tmp_path / "nbconvert.png"))
            else:
                # Offline the widget libraries never load: only the text fallback of the output is there.
                page.wait_for_timeout(1_500)
                assert page.locator(".ae-root").count() == 0
                assert any("html-manager" in url for url in refused) and any(
                    "require" in url for url in refused
                )
        finally:
            context.close()
