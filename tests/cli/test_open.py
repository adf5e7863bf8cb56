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
    assert calls == {"Explorer", "import_machine", "read_log", "sys.path.append", "os.getcwd", "os.path.realpath"}


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


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Path, str]]:
    """The JupyterLab `open` would start: (root, notebook) of each start, recorded instead of run."""
    import agent_explorer.cli.open as open_module

    calls: list[tuple[Path, str]] = []

    def serve(root: Path, notebook: Any, **_options: Any) -> int:
        calls.append((root, str(notebook)))
        return 0

    monkeypatch.setattr(open_module, "serve_notebook", serve)
    return calls


def test_open_log_a_second_time_reopens_your_notebook_as_it_is(project: Any, served: Any, capsys: Any) -> None:
    folder, _marker, entries = project
    write_log(folder / "run.jsonl", entries)
    assert main(["open", "run.jsonl", "--machine", REF, "--no-browser"]) == 0
    notebook = folder / "explore_run.ipynb"
    mine = notebook.read_text().replace("Explore a recorded run", "My notes on this run")
    notebook.write_text(mine)
    capsys.readouterr()
    assert main(["open", "run.jsonl", "--machine", REF, "--no-browser"]) == 0
    assert "reopening your notebook" in capsys.readouterr().out and notebook.read_text() == mine
    assert served == [(folder.resolve(), "explore_run.ipynb")] * 2
    assert main(["open", "run.jsonl", "--machine", REF, "--no-browser", "--force"]) == 0
    assert "My notes" not in notebook.read_text() and len(served) == 3


@pytest.mark.parametrize("damage", ["truncated", "swapped", "garbled", "empty"])
def test_open_log_checks_the_whole_log_before_starting_anything(
    project: Any, served: Any, capsys: Any, damage: str
) -> None:
    folder, _marker, entries = project
    write_log(folder / "run.jsonl", entries)
    lines = (folder / "run.jsonl").read_text().splitlines(keepends=True)
    if damage == "truncated":  # the last line cut mid-entry, as a crashed writer leaves it
        text = "".join(lines)[:-25]
    elif damage == "swapped":
        text = "".join([lines[0], lines[2], lines[1], *lines[3:]])
    elif damage == "garbled":
        text = "".join([*lines[:-1], "{not json\n"])
    else:
        text = ""
    (folder / "run.jsonl").write_text(text)
    assert main(["verify", "run.jsonl", "--machine", REF]) == 2
    said_by_verify = capsys.readouterr().err
    assert main(["open", "run.jsonl", "--machine", REF, "--no-browser"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("agent-explorer: error [")
    assert err.split("]")[0] == said_by_verify.split("]")[0]  # the same error code verify gives
    assert served == [] and not (folder / "explore_run.ipynb").exists()


def test_open_log_folds_it_first_a_version_mismatch_is_verifys_error_and_a_divergence_still_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, served: Any, capsys: Any
) -> None:
    from agent_explorer.samples.shipped import shipped_sample_logs_dir

    monkeypatch.chdir(tmp_path)
    for name in ("support_bridge_v2.jsonl", "support_divergent.jsonl"):
        (tmp_path / name).write_bytes((shipped_sample_logs_dir() / name).read_bytes())
    older = ["--machine", "agent_explorer.samples:support_agent"]  # version 1; the log was recorded by 2
    assert main(["verify", "support_bridge_v2.jsonl", *older]) == 2
    said_by_verify = capsys.readouterr().err
    assert main(["open", "support_bridge_v2.jsonl", *older, "--no-browser"]) == 2  # the notebook would raise it
    assert capsys.readouterr().err == said_by_verify and "[machine-version-mismatch]" in said_by_verify
    assert served == [] and not (tmp_path / "explore_support_bridge_v2.ipynb").exists()
    assert main(["open", "support_divergent.jsonl", "--no-browser"]) == 0
    assert "diverges from machine support at index" in capsys.readouterr().out
    assert served == [(tmp_path.resolve(), "explore_support_divergent.ipynb")]


PLANTED = "from pathlib import Path\nPath({marker!r}).write_text('planted code ran')\n"


@pytest.mark.parametrize("machine", ["sample", "yours-beside-the-log"])
def test_the_notebook_imports_nothing_planted_beside_the_log(project: Any, machine: str) -> None:
    """A log's folder holding `agent_explorer/__init__.py` and `pandas.py`: the notebook is written there (the
    default: the current folder) and run in a real kernel started there; neither planted module runs."""
    import pandas  # noqa: F401  (this process has the folder on sys.path too: the real one first)

    folder, marker, entries = project
    planted = folder / "PLANTED"
    (folder / "agent_explorer").mkdir()
    (folder / "agent_explorer" / "__init__.py").write_text(PLANTED.format(marker=str(planted)))
    (folder / "pandas.py").write_text(PLANTED.format(marker=str(planted)))
    if machine == "sample":
        from agent_explorer.samples.shipped import shipped_sample_logs_dir

        log = folder / "run.jsonl"
        log.write_bytes((shipped_sample_logs_dir() / "support_clean.jsonl").read_bytes())
        notebook = write_log_notebook(str(log), folder)
    else:
        write_log(folder / "run.jsonl", entries)
        notebook = write_log_notebook("run.jsonl", folder, machine=REF)
        assert literals(code_cell(notebook))["MACHINE_PATH"] == str(folder.resolve())
    outputs = run_notebook(notebook)
    assert not [o for o in outputs if o.get("output_type") == "error"], outputs
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
    assert not planted.exists()
    assert marker.exists() == (machine != "sample")  # the machine you named still imports from its folder


def test_the_notebook_for_a_store_opens_it_read_only(project: Any) -> None:
    """Running the notebook leaves a rollback-journal SQLite file byte for byte as it was (no switch to WAL)."""
    import sqlite3

    folder, _marker, entries = project
    store = SqliteEventLogStore(folder / "runs.db")
    store.sync.append(thread_id="t", expected_index=0, entries=entries)
    store.sync.close()
    with sqlite3.connect(folder / "runs.db") as raw:
        assert raw.execute("PRAGMA journal_mode = DELETE").fetchone() == ("delete",)
    before = (folder / "runs.db").read_bytes()
    notebook = write_log_notebook("sqlite:///runs.db#t", folder / "nb", machine=REF)
    assert "read_only=True" in code_cell(notebook)
    outputs = run_notebook(notebook)
    assert not [o for o in outputs if o.get("output_type") == "error"], outputs
    assert (folder / "runs.db").read_bytes() == before
    assert sorted(p.name for p in folder.glob("runs.db*")) == ["runs.db"]


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


@pytest.mark.postgres
def test_the_notebook_for_a_postgres_thread_holds_no_password_and_opens_it_read_only(
    project: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The URL's password (`user:pw@` and `?password=`) never enters the notebook; the kernel's libpq takes it from
    PGPASSWORD. The cell's store refuses writes (read-only transactions), so a fork's save fails there."""
    import asyncio
    import uuid
    from urllib.parse import urlsplit

    import nbformat
    from nbclient import NotebookClient

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from stores.conftest import drop_schema, pg_dsn

    folder, _marker, entries = project
    dsn = pg_dsn()
    schema = f"t_{uuid.uuid4().hex[:12]}"
    parts = urlsplit(dsn)
    user, host = parts.username or "postgres", parts.netloc.rpartition("@")[2]
    url = f"{parts.scheme}://{user}:s3cret-pw@{host}{parts.path}?schema={schema}&password=s3cret-pw"
    store = open_store_for_test(f"{dsn}{'&' if '?' in dsn else '?'}schema={schema}")
    try:
        store.sync.append(thread_id="t", expected_index=0, entries=entries)
        store.sync.close()
        notebook = write_log_notebook(f"{url}#t", folder / "nb", machine=REF)
        text = notebook.read_text()
        assert "s3cret-pw" not in text
        assert literals(code_cell(notebook))["STORE_URL"] == f"{parts.scheme}://{user}@{host}{parts.path}?schema={schema}"
        assert "PGPASSWORD" in text
        monkeypatch.setenv("PGPASSWORD", "s3cret-pw")
        book = nbformat.read(notebook, as_version=4)  # type: ignore[no-untyped-call]
        book.cells.append(nbformat.v4.new_code_cell(  # type: ignore[no-untyped-call]
            "try:\n    ex.fork(at=2).save()\nexcept Exception as error:\n    print('refused:', error.code)"))
        NotebookClient(book, kernel_name="python3", timeout=120,
                       resources={"metadata": {"path": str(notebook.parent)}}).execute()
        outputs = [o for c in book.cells if c.cell_type == "code" for o in c.outputs]
        assert not [o for o in outputs if o.get("output_type") == "error"], outputs
        assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
        assert any("refused: store-error" in o.get("text", "") for o in outputs), outputs
        check = open_store_for_test(f"{dsn}{'&' if '?' in dsn else '?'}schema={schema}")
        assert [info[0] for info in check.sync.list_threads()] == ["t"]  # the save wrote nothing
        check.sync.close()
    finally:
        asyncio.run(drop_schema(dsn, schema))


def open_store_for_test(url: str) -> Any:
    from agent_explorer.stores.urls import open_store

    return open_store(url)


def test_open_with_no_log_keeps_a_sample_log_file_it_did_not_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, served: Any, capsys: Any
) -> None:
    import agent_explorer.samples.generate as generate

    monkeypatch.setattr(generate, "LONG_RUN_TICKETS", 3)
    (tmp_path / "sample_logs").mkdir()
    notes = tmp_path / "sample_logs" / "support_clean.jsonl"
    notes.write_text("my notes\n")
    assert main(["open", "--dir", str(tmp_path), "--no-browser"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(notes) in err and "--force" in err
    assert notes.read_text() == "my notes\n" and served == []
    assert main(["open", "--dir", str(tmp_path), "--no-browser", "--force"]) == 0
    assert notes.read_text() != "my notes\n" and served == [(tmp_path.resolve(), "notebooks/01_explore_a_run.ipynb")]


def test_open_log_serves_the_written_notebook(project: Any) -> None:
    """JupyterLab answers on the printed URL with the notebook written for the log, without the "get Jupyter
    news?" toast (a default of the served lab only: the user's own settings folder is left as it was)."""
    pytest.importorskip("jupyterlab")
    folder, _marker, entries = project
    write_log(folder / "run.jsonl", entries)
    planted = folder / "PLANTED"  # the server runs in --dir: a module there must not be imported in its place
    (folder / "notebooks" / "jupyterlab").mkdir(parents=True)
    for module in ("jupyter.py", "jupyterlab/__init__.py"):
        (folder / "notebooks" / module).write_text(PLANTED.format(marker=str(planted)))
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
        assert not planted.exists()
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
