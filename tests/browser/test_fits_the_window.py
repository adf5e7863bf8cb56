"""The widget opens no taller than the browser window, in a real JupyterLab through headless Chromium.

A 1,000 px tall window used to show widgets 1,013-1,466 px tall: the chart took its full default height whatever
the window, so the table or the search under it were always below the fold. The chart's default height now
leaves the rest of the widget room (a user can still drag it taller).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import Lab, NotebookPage, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WINDOW = {"width": 1400, "height": 1000}
LOGS = {"support_clean": "support_agent", "support_divergent": "support_agent", "planner_trip": "planner_agent"}


@pytest.fixture
def nb(browser: Any, lab: Lab) -> Iterator[NotebookPage]:
    context = browser.new_context(viewport=WINDOW, device_scale_factor=1)
    try:
        page = NotebookPage(context.new_page(), lab)
        yield page
        with contextlib.suppress(Exception):
            page.page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
    finally:
        context.close()


def test_each_widget_opens_no_taller_than_a_1000_px_window(nb: NotebookPage, lab: Lab, tmp_path: Path) -> None:
    logs = Path(__file__).parents[2] / "sample_logs"
    cells = ["from agent_explorer import Explorer, read_log\nfrom agent_explorer import samples"]
    cells += [f"Explorer(samples.{machine}, read_log({str(logs / (name + '.jsonl'))!r}))" for name, machine in LOGS.items()]
    write_notebook(lab.root / "fits.ipynb", cells)
    nb.open("fits.ipynb", widgets=len(LOGS))
    heights = []
    for n, name in enumerate(LOGS):
        root = nb.widget(n)
        root.scroll_into_view_if_needed()
        nb.page.wait_for_timeout(200)  # the chart sizes its panel once laid out
        heights.append((name, round(root.bounding_box()["height"])))
        nb.shot(tmp_path / f"{name}.png", n)
    assert all(height <= WINDOW["height"] for _, height in heights), heights
    assert nb.widget(0).get_by_test_id("composer").count() == 1  # measured with everything a notebook shows
    assert nb.dialogs == []
