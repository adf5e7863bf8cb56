"""Every notebook in notebooks/ runs top to bottom with no error, in a real kernel, from notebooks/ as cwd.

They run under nbclient with the `python3` kernel of the interpreter running the tests (the venv's), exactly as
JupyterLab would run them after `agent-explorer open`. They are also committed clean (no outputs), and each
teaches in prose as well as code.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NAMES = [
    "01_explore_a_run.ipynb",
    "02_teaching_replay.ipynb",
    "03_postmortem.ipynb",
    "04_what_if.ipynb",
    "05_record_your_own_agent.ipynb",
    "06_follow_a_live_run.ipynb",
    "07_triage_a_store.ipynb",
]


def _kernel_name() -> str:
    """The `python3` kernel, checked to be this interpreter's (so the notebooks import this checkout)."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    if spec.argv[0] not in ("python", "python3", sys.executable):
        pytest.fail(f"the python3 kernel runs {spec.argv[0]}, not {sys.executable}; install the venv's ipykernel spec")
    return "python3"


def test_the_notebooks_are_the_named_ones() -> None:
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_a_notebook_is_committed_without_outputs_and_reads_as_prose_and_code(name: str) -> None:
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)  # type: ignore[no-untyped-call]
    nbformat.validate(notebook)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    prose = [c for c in notebook.cells if c.cell_type == "markdown"]
    assert all(not c.outputs and c.execution_count is None for c in code), f"{name}: strip the outputs before committing"
    assert len(prose) >= len(code) // 2 + 1, f"{name}: {len(prose)} prose cells for {len(code)} code cells"
    assert prose[0].source.startswith("# ")


@pytest.mark.parametrize("name", NAMES)
def test_a_notebook_runs_top_to_bottom_without_errors(name: str) -> None:
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)  # type: ignore[no-untyped-call]
    client = NotebookClient(
        notebook,
        kernel_name=_kernel_name(),
        timeout=180,
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    try:
        client.execute()
    except CellExecutionError as error:  # the cell's traceback, not nbclient's
        pytest.fail(f"{name}: {error}")
    errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == []
    # Every code cell ran (nothing skipped) and at least one shows the explorer widget.
    assert all(c.execution_count for c in notebook.cells if c.cell_type == "code")
    widgets = [
        o for c in notebook.cells if c.cell_type == "code" for o in c.outputs
        if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    assert widgets, f"{name} never displays the explorer"


# After Run All, what each notebook's prose says its widgets show is what they show (probed in the same kernel).
PROBES = {
    "01_explore_a_run.ipynb": (
        "print(ex.index == decisions[0] == ex.frame['index'], ex.frame['valueText'], 'cost' in ex.frame)",
        "True awaitingApproval True",
    ),
    "03_postmortem.ipynb": (
        "print(ex.index == first, ex.frame['recording']['source'], both.frame['recording']['source'],"
        " both.frame['recording']['valueText'], both.verification['machines']['before'].split()[0])",
        "True inferred recorder awaitingApproval recording",
    ),
    "04_what_if.ipynb": (
        "print(ex.line.name, ex.comparison['branch']['name'], store.sync.list_threads() == threads_before,"
        " [b.name for b in ex.branches()][:3])",
        "recording rejected True ['rejected', 'no-refund', 'timeout']",
    ),
    "06_follow_a_live_run.ipynb": (  # the run over, following stopped: the widget shows the whole run at its end
        "print(ex.following, ex.live['following'], len(ex), ex.length, ex.index, ex.frame['valueText'],"
        " ex.verification['status'], run.done())",
        "False False 12 12 11 resolved ok True",
    ),
    "07_triage_a_store.ipynb": (  # the list filtered from a cell, the diverging run opened and forked under it
        "print(runs.page['filter']['verified'], runs.page['total'], runs.counts['counts'], runs.selected == thread,"
        " ex.verification['status'], reply.snapshot.value, len(crashed), len(diverging))",
        "False 300 {'done': 1800, 'error': 0, 'idle': 900, 'in-flight': 300, 'skipped': 0, 'unreadable': 0} True"
        " diverged replying 300 300",
    ),
}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_after_run_all_the_widgets_show_what_the_prose_says(name: str) -> None:
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)  # type: ignore[no-untyped-call]
    probe, expected = PROBES[name]
    notebook.cells.append(nbformat.v4.new_code_cell(probe))  # type: ignore[no-untyped-call]
    client = NotebookClient(notebook, kernel_name=_kernel_name(), timeout=180,
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    try:
        client.execute()
    except CellExecutionError as error:
        pytest.fail(f"{name}: {error}")
    printed = "".join(o.get("text", "") for o in notebook.cells[-1].outputs if o.output_type == "stream")
    assert printed.strip() == expected
