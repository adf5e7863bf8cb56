"""`agent-explorer open [LOG]`: the notebook written for a log, the sample workspace, and the server it starts.

The notebook's code names the log, URL and machine only as literals: a hostile file name is tried and the notebook
is run in a real kernel, which must open exactly that file and run nothing else. JupyterLab itself is started for
real and asked for the notebook over HTTP.
"""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from agent_explorer import SqliteEventLogStore, write_log
from agent_explorer.cli import main
from agent_explorer.cli.open import write_log_notebook, write_sample_workspace
from agent_explorer.errors import AgentError

from .test_cli import MACHINE_MODULE, record
from .test_consent import MODULE, REF, marker_module

HOSTILE_NAMES = [
    "run'); __import__('pathlib').Path('PWNED').touch(); ('.jsonl",
    'run"""; import os; os.system("touch PWNED"); """.jsonl',
    "run\nimport os; os.system('touch PWNED')\n#.jsonl",
    "run \u202e\u2028 # é.jsonl",
]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A user's folder: their machine module (which marks its import) and a recorded run; cwd is that folder."""
    import importlib

    marker = marker_module(tmp_path)
    (tmp_path / "open_recorder.py").write_text(MACHINE_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    recorder = importlib.import_module("open_recorder")
    entries = record(recorder.counter, [{"type": "INC"}, {"type": "INC"}, {"type": "STOP"}], ref=REF)
    yield tmp_path, marker, entries
    for name in (MODULE, "open_recorder"):
        sys.modules.pop(name, None)


def code_cell(path: Path) -> str:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert len(code) == 1 and code[0]["outputs"] == [] and code[0]["execution_count"] is None
    assert all(not isinstance(c["source"], str) or c["source"].isascii() for c in notebook["cells"] if c["cell_type"] == "code")
    return str(code[0]["source"])


def literals(code: str) -> dict[str, Any]:
    """Every top-level `NAME = <literal>` of the cell (and a check that nothing else assigns from a string)."""
    found: dict[str, Any] = {}
    for node in ast.parse(code).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            (target,) = node.targets
            assert isinstance(target, ast.Name)
            found[target.id] = node.value.value
    return found


def run_notebook(path: Path) -> list[dict[str, Any]]:
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    NotebookClient(notebook, kernel_name="python3", timeout=120,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]


@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=["quote", "triple-quote", "newline", "bidi"])
def test_a_hostile_file_name_is_a_literal_in_the_notebook(project: Any, name: str) -> None:
    folder, _marker, entries = project
    log = folder / name
    write_log(log, entries)
    notebook = write_log_notebook(str(log), folder / "nb", machine=REF)
    assert re.fullmatch(r"explore_[A-Za-z0-9_-]+\.ipynb", notebook.name)
    code = code_cell(notebook)
    assert code.isascii()
    assert literals(code) == {"LOG": str(log.resolve()), "MACHINE": REF, "MACHINE_PATH": str(folder.resolve())}
    calls = {ast.unparse(n.func) for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Call)}
    assert calls == {"Explorer", "import_machine", "read_log", "sys.path.insert"}


def test_the_notebook_for_a_hostile_name_opens_that_log_in_a_real_kernel(project: Any) -> None:
    folder, marker, entries = project
    log = folder / HOSTILE_NAMES[0]
    write_log(log, entries)
    notebook = write_log_notebook(str(log), folder / "elsewhere", machine=REF)
    outputs = run_notebook(notebook)
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
    assert not list(folder.rglob("PWNED")) and marker.exists()  # the machine the user named, and nothing else


def test_open_log_needs_consent_for_the_ref_the_log_names(project: Any, capsys: Any) -> None:
    folder, marker, entries = project
    write_log(folder / "run.jsonl", entries)
    assert main(["open", "run.jsonl", "--no-browser"]) == 2
    assert REF in capsys.readouterr().err
    assert not marker.exists() and not (folder / "explore_run.ipynb").exists()
    path = write_log_notebook("run.jsonl", folder, trust_ref=True)
    assert literals(code_cell(path))["MACHINE"] == REF and marker.exists()


def test_an_existing_notebook_is_kept_unless_forced(project: Any) -> None:
    folder, _marker, entries = project
    write_log(folder / "run.jsonl", entries)
    (folder / "explore_run.ipynb").write_text("mine")
    with pytest.raises(AgentError) as caught:
        write_log_notebook("run.jsonl", folder, machine=REF)
    assert caught.value.code == "file-exists" and "--force" in caught.value.message
    assert (folder / "explore_run.ipynb").read_text() == "mine"
    write_log_notebook("run.jsonl", folder, machine=REF, force=True)
    assert literals(code_cell(folder / "explore_run.ipynb"))["LOG"] == str((folder / "run.jsonl").resolve())


def test_a_store_thread_opens_from_another_folder(project: Any) -> None:
    folder, _marker, entries = project
    store = SqliteEventLogStore(folder / "runs.db")
    store.sync.append(thread_id="t'1", expected_index=0, entries=entries)
    store.sync.close()
    notebook = write_log_notebook("sqlite:///runs.db#t'1", folder / "nb", machine=REF)
    values = literals(code_cell(notebook))
    assert values["STORE_URL"] == f"sqlite:///{(folder / 'runs.db').resolve()}" and values["THREAD"] == "t'1"
    outputs = run_notebook(notebook)
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)


def test_a_memory_store_and_a_missing_log_are_one_line_errors(project: Any, capsys: Any) -> None:
    assert main(["open", "memory:#t", "--machine", REF, "--no-browser"]) == 2
    assert "memory:" in capsys.readouterr().err
    assert main(["open", "missing.jsonl", "--machine", REF, "--no-browser"]) == 2
    assert "no such log file" in capsys.readouterr().err


def test_the_sample_workspace_copies_notebooks_and_keeps_your_edits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: Any) -> None:
    import agent_explorer.samples.generate as generate
    from agent_explorer.samples.shipped import GOLDEN_FILES, NOTEBOOKS, shipped_notebooks_dir

    monkeypatch.setattr(generate, "LONG_RUN_TICKETS", 3)  # the full long run is the session fixture's job
    root, notebook = write_sample_workspace(tmp_path, "01_explore_a_run.ipynb")
    assert root == tmp_path.resolve() and str(notebook) == "notebooks/01_explore_a_run.ipynb"
    for name in NOTEBOOKS:
        assert (root / "notebooks" / name).read_bytes() == (shipped_notebooks_dir() / name).read_bytes()
    assert all((root / "sample_logs" / name).exists() for name in (*GOLDEN_FILES, "samples.db", "inbox_long.jsonl"))
    (root / "notebooks" / "02_teaching_replay.ipynb").write_text("my notes")
    write_sample_workspace(tmp_path, "01_explore_a_run.ipynb")
    assert (root / "notebooks" / "02_teaching_replay.ipynb").read_text() == "my notes"
    assert "keeping your edited" in capsys.readouterr().out
    write_sample_workspace(tmp_path, "01_explore_a_run.ipynb", force=True)
    assert (root / "notebooks" / "02_teaching_replay.ipynb").read_bytes() == (
        shipped_notebooks_dir() / "02_teaching_replay.ipynb").read_bytes()
    with pytest.raises(AgentError):
        write_sample_workspace(tmp_path, "../../etc/passwd")


def test_open_log_serves_the_written_notebook(project: Any) -> None:
    """JupyterLab answers on the printed URL with the notebook written for the log, without the "get Jupyter
    news?" toast (a default of the served lab only: the user's own settings folder is left as it was)."""
    pytest.importorskip("jupyterlab")
    folder, _marker, entries = project
    write_log(folder / "run.jsonl", entries)
    user_settings = folder.parent / "user-lab-settings"  # the user's own JupyterLab settings, none written yet
    user_settings.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_explorer.cli", "open", "run.jsonl", "--machine", REF, "--no-browser",
         "--port", "18951", "--dir", "notebooks"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True, cwd=folder,
        env={**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(user_settings)},
    )
    try:
        assert process.stdout is not None
        url = None
        for line in process.stdout:
            found = re.search(r"http://127\.0\.0\.1:\d+/lab/tree/explore_run\.ipynb\?token=\w+", line)
            if found:
                url = found.group(0)
                break
        assert url, "open printed no notebook URL"
        api = url.replace("/lab/tree/", "/api/contents/")
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(api, timeout=5) as response:
                    notebook = json.loads(response.read())
                    break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.5)
        source = "".join(c["source"] for c in notebook["content"]["cells"] if c["cell_type"] == "code")
        assert literals(source)["LOG"] == str((folder / "run.jsonl").resolve())
        # The page asks "get Jupyter news?" when the setting it composes (the user's value, else the schema's
        # default) is "none", JupyterLab's own default; the served lab's default is "false".
        settings = url.replace("/lab/tree/explore_run.ipynb",
                               "/lab/api/settings/@jupyterlab/apputils-extension:notification")
        with urllib.request.urlopen(settings, timeout=10) as response:
            answer = json.loads(response.read())
        defaults = {key: spec["default"] for key, spec in answer["schema"]["properties"].items()}
        assert defaults["fetchNews"] == "false" and defaults["checkForUpdates"] is False
        assert answer["settings"] == {}  # nothing set in the user's name: a choice they make still wins
        assert list(user_settings.rglob("*")) == []
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()
