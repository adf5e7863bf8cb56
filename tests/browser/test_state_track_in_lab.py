"""The state track in a real JupyterLab and Chromium (issue 23, frames on time): once the kernel has sent the
line's track, a slider move lights its index's active states in the input's own task, while the kernel is busy
(a cell sleeping), so no frame can have come back; the chart then stays right when the frames land.

Checked on the watch chart (six parallel regions, ~180 distinct configurations over 300 entries), whole and with
a compound state collapsed (its box lit and naming its active state), against `ex.snapshot` at each index; on a
branch checked out (its own track replaces the recording's); and on a long log still folding (no track: the
chart waits for the frame, as before the track, until the track lands).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from .conftest import Lab, NotebookPage, browser_page, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

INDICES = [213, 17, 150, 299, 64, 5]
SLEEP_S = 8

SETUP = """\
from agent_explorer.explorer import Explorer
from watch_chart import watch_machine, watch_run
watch = watch_machine()
ex = Explorer(watch, watch_run(watch, 300))
ex"""

# What the page shows right after one slider input, read in the same task as the input's dispatch: the chart's
# lit states (svg element ids), the index it says it lit, what the state panel (drawn from the kernel's frame)
# shows, and the collapsed boxes' second lines.
MOVE = """([root, i]) => {
  const el = document.querySelectorAll(".ae-root")[root];
  const slider = el.querySelector("[data-testid=slider]");
  slider.value = String(i);
  slider.dispatchEvent(new Event("input", { bubbles: true }));
  const svg = el.querySelector("svg.ae-svg");
  return {
    lit: [...svg.querySelectorAll(".active")].map((g) => g.id).sort(),
    litIndex: el.querySelector("[data-testid=graph]").dataset.litIndex ?? null,
    panel: el.querySelector(".ae-event-line")?.textContent ?? "",
    boxes: Object.fromEntries([...svg.querySelectorAll("g.node.collapsed")].map((g) => [g.id, g.querySelectorAll("text")[1]?.textContent ?? ""])),
  };
}"""

LIT = """(root) => {
  const el = document.querySelectorAll(".ae-root")[root];
  return [...el.querySelectorAll("svg.ae-svg .active")].map((g) => g.id).sort();
}"""


def expected(nb: NotebookPage, indices: list[int]) -> dict[str, Any]:
    """Per index: the svg ids of the states `ex.snapshot` says are active (those drawn), and per collapsed box
    the paths its line may name (the deepest active states inside it)."""
    code = f"""
import json
out = {{}}
for i in {indices!r}:
    ex.index = i
    ids = list(ex.snapshot.state_ids)
    nodes, inside = ex.graph["nodes"], ex.graph["collapsed"]
    boxes = {{}}
    for s in ids:
        if s in inside:
            boxes.setdefault(nodes[s], []).append(inside[s][1])
    deepest = {{box: sorted({{p for p in paths if p.count(".") == max(q.count(".") for q in paths)}})
               for box, paths in boxes.items()}}
    out[i] = {{"svg": sorted({{nodes[s] for s in ids if s in nodes}}), "boxes": deepest}}
ex.index = 0
print(json.dumps(out))
"""
    return dict(json.loads(nb.kernel(code)))


def busy(nb: NotebookPage) -> None:
    """Keep the kernel busy for SLEEP_S seconds (a long cell): nothing it owes the page can arrive meanwhile."""
    nb.page.evaluate(f"""() => {{
        const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
        kernel.requestExecute({{ code: "import time; time.sleep({SLEEP_S})", store_history: false }});
    }}""")
    nb.page.wait_for_function("""() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status
                                 === "busy" """, timeout=10_000)


@pytest.fixture
def nb(browser: Any, lab: Lab) -> Iterator[NotebookPage]:
    with browser_page(browser) as fresh:
        page = NotebookPage(fresh, lab)
        try:
            yield page
        finally:
            page.page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")


def present(nb: NotebookPage, ids: list[str]) -> list[str]:
    """Of these svg ids, the ones the drawing has (a state inside a collapsed box is drawn as the box)."""
    return sorted(set(nb.page.evaluate("(ids) => ids.filter((id) => document.getElementById(id))", ids)))


@pytest.mark.parametrize("collapse", [None, "main.displays"])
def test_a_slider_move_lights_its_states_while_the_kernel_is_busy(nb: NotebookPage, lab: Lab,
                                                                  collapse: str | None) -> None:
    name = f"state-track-{collapse or 'whole'}.ipynb"
    write_notebook(lab.root / name, [SETUP])
    nb.open(name, 1)
    if collapse:
        nb.kernel(f"ex.collapse({collapse!r})")
        nb.page.wait_for_function("() => document.querySelector('.ae-root svg.ae-svg g.node.collapsed')")
    length = nb.kernel("print(ex.state_track['length'])").strip()
    assert length == "301", f"the kernel sent no whole track: {length!r}"
    want = expected(nb, INDICES)
    nb.page.wait_for_function("() => document.querySelector('.ae-root .ae-event-line')?.textContent.includes('#0 ·')")

    busy(nb)
    for i in INDICES:
        seen = nb.page.evaluate(MOVE, [0, i])
        assert f"#{i} ·" not in seen["panel"], "the kernel answered while busy: this would not test the track"
        assert seen["litIndex"] == str(i)
        assert seen["lit"] == present(nb, want[str(i)]["svg"]), f"index {i}: the chart lit other states"
        if collapse:
            assert seen["boxes"], "the collapsed box is missing"
            for box, text in seen["boxes"].items():
                paths = want[str(i)]["boxes"].get(box)
                assert text == "▸ not active" if not paths else text in {f"▸ {p}" for p in paths}, (i, box, text)

    # The frames land: the state panel catches up with the last move and the chart still shows its states.
    last = INDICES[-1]
    nb.page.wait_for_function(f"() => document.querySelector('.ae-root .ae-event-line')?.textContent.includes('#{last} ·')",
                              timeout=(SLEEP_S + 20) * 1000)
    assert nb.page.evaluate(LIT, 0) == present(nb, want[str(last)]["svg"])
    assert nb.kernel("print(ex.index)").strip() == str(last)


def test_a_checkout_replaces_the_track_with_the_branch_s(nb: NotebookPage, lab: Lab) -> None:
    """A branch on view lights its own states: at indices where it parts from the recording, the chart shows the
    branch's configuration on the input, not the recording's (whose track the page held before)."""
    write_notebook(lab.root / "state-track-branch.ipynb", [SETUP])
    nb.open("state-track-branch.ipynb", 1)
    moves = [104, 101, 108]
    recording = expected(nb, moves)
    nb.kernel("""
branch = ex.fork(at=100)
for event in ["D", "D", "A", "A", "B", "C_DOWN", "STOPWATCH", "D", "A", "B"]:
    branch.append({"type": event})
ex.checkout(branch, index=0)
""")
    assert nb.kernel("print(ex.state_track['line'], ex.state_track['length'])").split() == ["fork-1", "110"]
    want = expected(nb, moves)
    nb.page.wait_for_function("() => document.querySelector('.ae-root .ae-event-line')?.textContent.includes('#0 ·')")

    busy(nb)
    for i in moves:
        assert want[str(i)]["svg"] != recording[str(i)]["svg"], "pick indices where the lines part"
        seen = nb.page.evaluate(MOVE, [0, i])
        assert f"#{i} ·" not in seen["panel"], "the kernel answered while busy: this would not test the track"
        assert seen["litIndex"] == str(i)
        assert seen["lit"] == present(nb, want[str(i)]["svg"]), f"index {i}: not the branch's states"


def test_without_a_track_the_chart_waits_for_the_frame_then_lights_at_once(nb: NotebookPage, lab: Lab) -> None:
    """A long log opens before its fold is built: no track yet, so a move is lit when its frame lands (as before
    the track); once the background fold lands the track comes and a move is lit in the input's own task."""
    write_notebook(lab.root / "state-track-lazy.ipynb", [
        "from agent_explorer.explorer import Explorer\n"
        "from agent_explorer.samples.inbox import inbox_agent\n"
        "from agent_explorer.samples.long_run import long_run_entries\n"
        "ex = Explorer(inbox_agent, list(long_run_entries(20_000)))\nex"])
    nb.open("state-track-lazy.ipynb", 1)
    building = nb.kernel("print(ex.state_track == {}, ex.line.timeline.built < len(ex.entries))").split()
    if building != ["True", "True"]:
        pytest.skip(f"the background fold finished before the page could move (state: {building})")
    seen = nb.page.evaluate(MOVE, [0, 3])  # index 3 is folded already: its frame is a real one
    assert seen["litIndex"] != "3", "lit from a track the kernel has not sent"
    nb.page.wait_for_function("() => document.querySelector('.ae-root [data-testid=graph]').dataset.litIndex === '3'")

    nb.kernel("ex.wait_verified(300)")  # the track goes out (iopub) before this execution's reply comes back
    assert nb.kernel("print(ex.state_track['length'])").strip() == "100001"
    want = expected(nb, [90_000])
    nb.page.wait_for_function("() => document.querySelector('.ae-root .ae-event-line')?.textContent.includes('#0 ·')")
    seen = nb.page.evaluate(MOVE, [0, 90_000])
    assert seen["litIndex"] == "90000" and seen["lit"] == present(nb, want["90000"]["svg"])
