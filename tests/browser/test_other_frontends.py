"""The explorer outside JupyterLab: Jupyter Notebook 7 and marimo (`mo.ui.anywidget`), driven in Chromium.

Each front end is a real server from this venv on 127.0.0.1, opening the recorded support run; the same checks
run in both (servers.exercise_explorer): the chart renders, the slider scrubs, the kernel answers a table request.
"""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_explorer import read_log

from .conftest import write_notebook
from .servers import exercise_explorer, free_port, quiet_jupyter_env, run_all_jupyter_cells, serve

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SUPPORT_LOG = Path(__file__).parents[2] / "sample_logs" / "support_clean.jsonl"
OPEN = f"""\
from agent_explorer import Explorer, read_log
from agent_explorer.samples import support_agent
ex = Explorer(support_agent, read_log({str(SUPPORT_LOG)!r}))"""

MARIMO_APP = f'''\
import marimo

app = marimo.App()


@app.cell
def _():
    import marimo as mo

{"".join("    " + line + chr(10) for line in OPEN.splitlines())}
    widget = mo.ui.anywidget(ex)
    widget
    return


if __name__ == "__main__":
    app.run()
'''


def _root_flag() -> list[str]:
    return ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []


def test_the_explorer_works_in_jupyter_notebook_7(page: Any, tmp_path: Path) -> None:
    pytest.importorskip("notebook")
    write_notebook(tmp_path / "explore.ipynb", [OPEN + "\nex"])
    token, port = secrets.token_hex(16), free_port()
    command = [sys.executable, "-m", "jupyter", "notebook", "--no-browser", "--ServerApp.ip=127.0.0.1",
               f"--port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={tmp_path}", "--JupyterNotebookApp.expose_app_in_browser=True",
               *_root_flag()]
    with serve(command, cwd=tmp_path, env=quiet_jupyter_env(tmp_path), log=tmp_path / "notebook.log",
               ready=f"http://127.0.0.1:{port}/api/status?token={token}") as _:
        run_all_jupyter_cells(page, f"http://127.0.0.1:{port}/notebooks/explore.ipynb?token={token}")
        assert "/notebooks/explore.ipynb" in page.url  # Notebook 7's own page, not JupyterLab's /lab
        exercise_explorer(page, read_log(SUPPORT_LOG), tmp_path, "notebook7")


def test_the_explorer_works_in_marimo(page: Any, tmp_path: Path) -> None:
    pytest.importorskip("marimo")
    (tmp_path / "explore.py").write_text(MARIMO_APP, encoding="utf-8")
    token, port = secrets.token_hex(12), free_port()
    command = [sys.executable, "-m", "marimo", "run", "explore.py", "--headless", "--host", "127.0.0.1",
               "--port", str(port), "--token-password", token]
    env = {**os.environ, "HOME": str(tmp_path / "home")}  # marimo's config and state stay in the test's folder
    with serve(command, cwd=tmp_path, env=env, log=tmp_path / "marimo.log",
               ready=f"http://127.0.0.1:{port}/health") as _:
        page.goto(f"http://127.0.0.1:{port}/?access_token={token}")
        exercise_explorer(page, read_log(SUPPORT_LOG), tmp_path, "marimo")
