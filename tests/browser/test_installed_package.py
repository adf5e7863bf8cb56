"""The package as a user installs it: a wheel built from this checkout, installed with `[lab]` into a fresh
virtualenv in a temporary folder, and run from a folder outside the checkout.

From there: `agent-explorer open` (the samples) and `agent-explorer open LOG --machine …` each serve a notebook
whose widget renders, scrubs and answers in Chromium; the README's five-minute section runs as written; `html`
writes a page that renders; `verify` on a log naming a side-effecting module imports it only with consent.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agent_explorer import read_log

from .servers import exercise_explorer, quiet_jupyter_env, run_all_jupyter_cells, serve

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SUPPORT_LOG = ROOT / "sample_logs" / "support_clean.jsonl"
LAB_URL = r"http://127\.0\.0\.1:\d+/lab/tree/\S+\?token=\w+"
MARKER_MODULE = """\
from pathlib import Path
Path(__file__).with_name("IMPORTED").write_text("imported")
from agent_explorer.samples import support_agent as machine
"""


@dataclass
class Installed:
    venv: Path
    wheel: Path
    home: Path
    env: dict[str, str]

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)

    def run(self, *args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([self.bin("agent-explorer"), *args], cwd=cwd, env=self.env, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=600)
        if check:
            assert done.returncode == 0, f"agent-explorer {' '.join(args)}: {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done


def _build_wheel(dist: Path) -> Path:
    """Build the wheel once, reusing the widget bundle the editable install already built (no second npm run)."""
    env = dict(os.environ)
    if (ROOT / "agent_explorer" / "explorer" / "static" / "widget.js").exists():
        env["HATCH_JUPYTER_BUILDER_SKIP_NPM"] = "1"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
                   env=env, check=True, timeout=900, capture_output=True)
    (wheel,) = dist.glob("agent_explorer-*.whl")
    return wheel


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("installed")
    assert ROOT not in base.parents
    wheel = _build_wheel(base / "dist")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    # pip's own cache is reused (HOME is only changed for the user's commands below).
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile",
                           f"{wheel}[lab]"], capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    home = base / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "DISPLAY", "VIRTUAL_ENV")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", VIRTUAL_ENV=str(venv), HOME=str(home),
               XDG_DATA_HOME=str(home / ".local" / "share"), XDG_CONFIG_HOME=str(home / ".config"))
    return Installed(venv=venv, wheel=wheel, home=home, env=quiet_jupyter_env(home, env))


def test_the_wheel_ships_notebooks_and_small_logs_but_nothing_generated_or_big(installed: Installed) -> None:
    from agent_explorer.samples.shipped import GOLDEN_FILES, NOTEBOOKS

    with zipfile.ZipFile(installed.wheel) as wheel:
        sizes = {info.filename: info.file_size for info in wheel.infolist()}
    shipped = "agent_explorer/samples/shipped/"
    assert {f"{shipped}sample_logs/{n}" for n in GOLDEN_FILES} <= set(sizes)
    assert {f"{shipped}notebooks/{n}" for n in NOTEBOOKS} <= set(sizes)
    assert "agent_explorer/explorer/static/widget.js" in sizes
    assert not [n for n in sizes if n.endswith(("samples.db", "inbox_long.jsonl", ".generated.json"))]
    assert max(sizes.values()) < 5 * 1024 * 1024
    where = subprocess.run([installed.bin("python"), "-c", "import agent_explorer; print(agent_explorer.__file__)"],
                           cwd=installed.home, env=installed.env, capture_output=True, text=True, check=True)
    assert Path(where.stdout.strip()).is_relative_to(installed.venv)


def test_open_serves_the_sample_notebooks_from_the_installed_package(installed: Installed, page: Any,
                                                                     tmp_path: Path) -> None:
    command = [installed.bin("agent-explorer"), "open", "--no-browser", "--port", "18990"]
    with serve(command, cwd=installed.home, env=installed.env, log=tmp_path / "open.log", url_pattern=LAB_URL,
               timeout=300) as url:
        assert "/lab/tree/notebooks/01_explore_a_run.ipynb" in url
        folder = installed.home / ".local" / "share" / "agent-explorer"
        assert (folder / "notebooks" / "01_explore_a_run.ipynb").exists()
        assert (folder / "sample_logs" / "samples.db").exists() and (folder / "sample_logs" / "inbox_long.jsonl").exists()
        run_all_jupyter_cells(page, url)
        exercise_explorer(page, read_log(SUPPORT_LOG), tmp_path, "installed-samples")


def test_open_log_with_a_machine_of_your_own_serves_its_notebook(installed: Installed, page: Any,
                                                                 tmp_path: Path) -> None:
    project = installed.home / "project"
    project.mkdir()
    (project / "my_agent.py").write_text("from agent_explorer.samples import support_agent as agent\n")
    (project / "run.jsonl").write_bytes(SUPPORT_LOG.read_bytes())
    command = [installed.bin("agent-explorer"), "open", "run.jsonl", "--machine", "my_agent:agent",
               "--no-browser", "--port", "18991"]
    with serve(command, cwd=project, env=installed.env, log=tmp_path / "open.log", url_pattern=LAB_URL,
               timeout=300) as url:
        assert "/lab/tree/explore_run.ipynb" in url
        run_all_jupyter_cells(page, url)
        exercise_explorer(page, read_log(SUPPORT_LOG), tmp_path, "installed-log")
    cell = json.loads((project / "explore_run.ipynb").read_text())["cells"][1]["source"]
    assert "MACHINE = 'my_agent:agent'" in cell and f"LOG = {str(project / 'run.jsonl')!r}" in cell


def test_the_readme_five_minute_section_runs_as_written(installed: Installed, page: Any, tmp_path: Path) -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Your own agent in five minutes\n", 1)[1].split("\n## ", 1)[0]
    files = {m.group(1): m.group(0)[len("```python\n"):-3]
             for m in re.finditer(r"```python\n# (\w+\.py)\n.*?```", section, re.S)}
    assert sorted(files) == ["record.py", "support_bot.py"]
    bash = [line for block in re.findall(r"```bash\n(.*?)```", section, re.S) for line in block.splitlines() if line]
    assert bash[0] == "mkdir my-agent && cd my-agent" and bash[-1].startswith("agent-explorer open ")
    work = installed.home / "fresh"
    work.mkdir()
    subprocess.run(["bash", "-ec", bash[0]], cwd=work, env=installed.env, check=True)
    folder = work / "my-agent"
    for name, source in files.items():
        (folder / name).write_text(source, encoding="utf-8")
    for line in bash[1:-1]:
        done = subprocess.run(["bash", "-ec", line], cwd=folder, env=installed.env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=300)
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
        assert "Traceback" not in done.stderr
    with serve(["bash", "-ec", bash[-1] + " --port 18992"], cwd=folder, env=installed.env,
               log=tmp_path / "open.log", url_pattern=LAB_URL, timeout=300) as url:
        assert "/lab/tree/explore_ticket-1.ipynb" in url
        run_all_jupyter_cells(page, url)
        exercise_explorer(page, read_log_from(folder), tmp_path, "five-minutes",
                          step_to="RESOLVED", state="resolved", filter_type="RESOLVED")


def read_log_from(folder: Path) -> list[dict[str, Any]]:
    from agent_explorer import SqliteEventLogStore

    store = SqliteEventLogStore(folder / "runs.db", read_only=True)
    try:
        return list(store.sync.read("ticket-1"))
    finally:
        store.sync.close()


def test_html_from_the_installed_package_renders(installed: Installed, page: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    out = tmp_path / "support.html"
    installed.run("html", str(SUPPORT_LOG), "-o", str(out), cwd=installed.home)
    page.goto(out.as_uri())
    expect(page.locator("svg.ae-svg g.node.active")).to_have_count(1, timeout=30_000)
    assert page.locator("svg.ae-svg g.node.state").count() > 3


def test_verify_imports_a_log_named_module_only_with_consent(installed: Installed) -> None:
    project = installed.home / "consent"
    project.mkdir()
    (project / "marker_machine.py").write_text(MARKER_MODULE)
    lines = SUPPORT_LOG.read_text().splitlines()
    init = json.loads(lines[0])
    init["metadata"]["machineRef"] = "marker_machine:machine"
    (project / "named.jsonl").write_text("\n".join([json.dumps(init), *lines[1:]]) + "\n")
    refused = installed.run("verify", "named.jsonl", cwd=project, check=False)
    assert refused.returncode == 2 and "marker_machine:machine" in refused.stderr
    assert "--trust-machine-ref" in refused.stderr and not (project / "IMPORTED").exists()
    allowed = installed.run("verify", "named.jsonl", "--trust-machine-ref", cwd=project)
    assert "ok: 12 entries" in allowed.stdout and (project / "IMPORTED").read_text() == "imported"
