"""Start JupyterLab on one notebook for `agent-explorer open`: a free port, a fresh token, the URL printed.

It serves a folder the caller chose and opens nothing else; it never writes into that folder itself, and never
imports from it (the server starts with Python's safe-path flag).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from ..errors import AgentError

__all__ = ["check_port", "free_port", "quiet_settings_dir", "require_lab", "serve_notebook"]

# Defaults for the served JupyterLab only: no "get Jupyter news?" toast over the explorer's usage panel, no
# update check. Defaults, not settings: a choice the user made in their own settings still wins.
QUIET_DEFAULTS = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}}


def require_lab() -> None:
    """Fail before anything is written when JupyterLab is missing."""
    try:
        import jupyterlab  # noqa: F401
    except ImportError as error:
        raise AgentError("JupyterLab is not installed: pip install 'agent-explorer[lab]'", code="missing-lab") \
            from error


def check_port(port: int) -> None:
    """A port bind() can take; else one line (bind() itself raises OverflowError, a traceback)."""
    if not 1 <= port <= 65535:
        raise AgentError(f"--port must be a TCP port, 1 to 65535, got {port}", code="invalid-argument")


def free_port(preferred: int, attempts: int = 50) -> int:
    """The first port from `preferred` on that 127.0.0.1 can bind, so the URL printed is the one served."""
    check_port(preferred)
    for port in range(preferred, min(preferred + attempts, 65536)):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AgentError(f"no free port in {preferred}-{preferred + attempts - 1}; pass --port", code="no-free-port")


def serve_notebook(root: Path, notebook: PurePosixPath, *, port: int, no_browser: bool, what: str) -> int:
    """Run JupyterLab rooted at `root` with `notebook` (relative to it) open, until Ctrl-C; its exit code."""
    require_lab()
    port = free_port(port)
    token = secrets.token_hex(16)
    path = quote(notebook.as_posix())
    command = [
        # -P: the server runs in `root` (often a log's folder) without it on sys.path, so a `jupyter.py` or
        # `jupyterlab/` planted there is never imported in place of the real one.
        sys.executable, "-P", "-m", "jupyter", "lab",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.default_url=/lab/tree/{path}",
        # No "Would you like to get notified about official Jupyter news?" toast over the explorer's corner at
        # the default window size, and no fetch of a news feed from the internet for a local tool.
        "--LabApp.news_url=None",
    ]
    if no_browser or not (os.environ.get("DISPLAY") or sys.platform == "darwin"):
        command.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # containers and fresh VMs often run as root; Jupyter refuses otherwise
    url = f"http://127.0.0.1:{port}/lab/tree/{path}?token={token}"
    print(f"Opening JupyterLab on {what} (Ctrl-C to stop).\n"
          f"\n    Open this URL in your browser:  {url}\n\nThen run the notebook's cells (Run > Run All Cells).",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="agent-explorer-lab-") as scratch:
        settings = quiet_settings_dir(Path(scratch))
        return subprocess.call([*command, f"--LabApp.app_settings_dir={settings}"], cwd=root)


def quiet_settings_dir(scratch: Path) -> Path:
    """A copy of this environment's JupyterLab app settings folder with QUIET_DEFAULTS as one more override.

    Why a copy in a scratch folder: overrides are JupyterLab's way to change a default, and they live in the app
    settings folder of the installation; writing there (or in ~/.jupyter) would change every JupyterLab the user
    starts. The copy keeps the environment's own page config and overrides, and those win over ours (JupyterLab
    reads overrides.d/*.json in name order, then overrides.json)."""
    from jupyterlab.commands import get_app_dir

    source = Path(get_app_dir()) / "settings"
    target = scratch / "settings"
    if source.is_dir():
        shutil.copytree(source, target)
    (target / "overrides.d").mkdir(parents=True, exist_ok=True)
    (target / "overrides.d" / "agent-explorer.json").write_text(json.dumps(QUIET_DEFAULTS), encoding="utf-8")
    return target
