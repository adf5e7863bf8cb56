"""Consenting to a machine in the current folder does not let the other modules in that folder run.

`--machine my_agent:agent` imports `my_agent.py` from where the user stands. A folder shipped with a log can
also hold a `graphviz.py`, `anywidget.py`, `traitlets.py` or an `agent_explorer/` package. The user agreed to
`my_agent` only; the installed modules must still win for everything else, in the CLI's process and in the fleet's
worker processes (which inherit `sys.path`). Found using the installed wheel as a newcomer: before the fix the
current folder went first on `sys.path`, so `html --machine my_agent:agent` ran the planted modules (and then
crashed with a traceback), and `verify --all-threads --workers 2` ran the planted `agent_explorer/` in each worker.

The console script runs in a subprocess, as a user runs it: `python -m` would put the folder first by itself.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_explorer import SqliteEventLogStore, read_log

PLANTED = ("graphviz", "anywidget", "traitlets", "pandas", "orjson", "pydantic")


def console_script() -> Path:
    script = Path(sys.executable).with_name("agent-explorer")
    if not script.exists():
        pytest.skip("the agent-explorer console script is not installed in this venv")
    return script


@pytest.fixture
def shipped_folder(sample_logs: Path, tmp_path: Path) -> Path:
    """A folder as a stranger might ship it: a log, the user's machine module, and modules that leave markers."""
    folder = tmp_path / "shipped"
    folder.mkdir()
    shutil.copy(sample_logs / "support_clean.jsonl", folder / "run.jsonl")
    (folder / "my_agent.py").write_text("from agent_explorer.samples import support_agent as agent\n", encoding="utf-8")
    for name in PLANTED:
        (folder / f"{name}.py").write_text(
            f"open({str(folder / ('RAN_' + name))!r}, 'w').write('planted')\n", encoding="utf-8")
    package = folder / "agent_explorer"
    package.mkdir()
    (package / "__init__.py").write_text(
        f"open({str(folder / 'RAN_agent_explorer')!r}, 'w').write('planted')\n", encoding="utf-8")
    return folder


def ran(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.glob("RAN_*"))


def agent_explorer(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(console_script()), *args], cwd=folder, capture_output=True, text=True, timeout=240)


@pytest.mark.parametrize("argv", [
    ["verify", "run.jsonl", "--machine", "my_agent:agent"],
    ["verify", "run.jsonl", "--machine", "my_agent:agent", "--json"],
    ["html", "run.jsonl", "-o", "run.html", "--machine", "my_agent:agent"],
])
def test_only_the_consented_module_runs_from_the_folder(shipped_folder: Path, argv: list[str]) -> None:
    done = agent_explorer(shipped_folder, *argv)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert ran(shipped_folder) == []


def test_fleet_workers_import_the_installed_package_not_the_planted_one(shipped_folder: Path, sample_logs: Path) -> None:
    async def build() -> None:
        store = SqliteEventLogStore(shipped_folder / "runs.db")
        try:
            for thread in ("a", "b"):
                await store.append(thread_id=thread, expected_index=0,
                                   entries=read_log(sample_logs / "support_clean.jsonl"))
        finally:
            await store.aclose()

    asyncio.run(build())
    done = agent_explorer(shipped_folder, "verify", "sqlite:///runs.db", "--all-threads", "--machine",
                          "my_agent:agent", "--workers", "2", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok: 2 threads"), done.stdout
    assert ran(shipped_folder) == []
