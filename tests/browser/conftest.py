"""A real JupyterLab server and headless Debian Chromium (Playwright) for the explorer's browser tests.

The server runs from this venv on 127.0.0.1 with a random token and a throwaway root dir; the browser is
/usr/bin/chromium (never a downloaded one). Without Chromium the tests skip locally and fail under CI=true.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path(os.environ.get("AGENT_EXPLORER_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
HERE = Path(__file__).parent
EXPLORER_TESTS = HERE.parent / "explorer"


def _need_chromium() -> None:
    if CHROMIUM.exists():
        return
    message = f"{CHROMIUM} is missing: apt-get install chromium (browser tests need Debian's Chromium)"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(message)
    pytest.skip(message)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Lab:
    url: str
    token: str
    root: Path
    log: Path

    def notebook_url(self, name: str) -> str:
        return f"{self.url}/lab/tree/{name}?token={self.token}&reset"


def write_notebook(path: Path, cells: list[str]) -> None:
    """A minimal nbformat-4 notebook with the venv's python3 kernel (no kernel picker dialog)."""
    notebook = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": {
                "name": "python3",
                "display_name": "Python 3",
                "language": "python",
            },
            "language_info": {"name": "python"},
        },
        "cells": [
            {
                "cell_type": "code",
                "id": f"c{i}",
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": source,
            }
            for i, source in enumerate(cells)
        ],
    }
    path.write_text(json.dumps(notebook, indent=1))


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    _need_chromium()
    root = tmp_path_factory.mktemp("lab")
    token = secrets.token_hex(16)
    port = _free_port()
    log = root / "jupyter.log"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(EXPLORER_TESTS), os.environ.get("PYTHONPATH", "")]
        ),
    }
    env["JUPYTER_CONFIG_DIR"] = str(root / ".jupyter")  # no user settings leak in
    env["JUPYTER_RUNTIME_DIR"] = str(root / ".runtime")
    # No "get Jupyter news?" toast over the widgets in screenshots.
    settings = root / ".lab-settings"
    notification = (
        settings
        / "@jupyterlab"
        / "apputils-extension"
        / "notification.jupyterlab-settings"
    )
    notification.parent.mkdir(parents=True)
    notification.write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    env["JUPYTERLAB_SETTINGS_DIR"] = str(settings)
    command = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=",
        "--ServerApp.port_retries=0",
    ]
    if (
        hasattr(os, "geteuid") and os.geteuid() == 0
    ):  # containers and CI often run as root
        command.append("--allow-root")
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command, stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=root
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"jupyter lab exited early:\n{log.read_text()[-3000:]}"
                )
            try:
                with urllib.request.urlopen(
                    f"{url}/api/status?token={token}", timeout=2
                ) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"jupyter lab did not answer in 90 s:\n{log.read_text()[-3000:]}"
                )
            time.sleep(0.3)
        yield Lab(url=url, token=token, root=root, log=log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def browser(lab: Lab) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield chromium
        finally:
            chromium.close()


class NotebookPage:
    """One notebook open in JupyterLab: its cells run, helpers to talk to the kernel and find widgets."""

    def __init__(self, page: Any, lab: Lab) -> None:
        self.page = page
        self.lab = lab
        self.dialogs: list[str] = []
        page.on("dialog", self._on_dialog)

    def _on_dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def open(self, name: str, widgets: int) -> None:
        try:
            self._open(name, widgets)
        except Exception as error:
            shot = self.lab.root / f"open-failed-{name}.png"
            self.page.screenshot(path=str(shot))
            log = self.lab.log.read_text(errors="replace")[-2500:]
            raise AssertionError(
                f"opening {name} failed ({error}); screenshot {shot}; server log:\n{log}"
            ) from error

    def _open(self, name: str, widgets: int) -> None:
        page = self.page
        page.goto(self.lab.notebook_url(name))
        page.wait_for_function(
            """() => {
                const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
                const kernel = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
                return kernel && kernel.connectionStatus === "connected" && kernel.status === "idle";
            }""",
            timeout=90_000,
        )
        page.evaluate(
            "() => window.jupyterapp.commands.execute('notebook:run-all-cells')"
        )
        page.wait_for_function(
            f"() => document.querySelectorAll('.ae-root[data-ready=\"true\"]').length >= {widgets}",
            timeout=90_000,
        )

    def kernel(self, code: str) -> str:
        """Run `code` in the notebook's kernel (as a cell would) and return its stdout / error text."""
        return str(
            self.page.evaluate(
                """async (code) => {
                    const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
                    const future = kernel.requestExecute({ code, store_history: false });
                    let out = "";
                    future.onIOPub = (msg) => {
                        if (msg.header.msg_type === "stream") out += msg.content.text;
                        if (msg.header.msg_type === "error") out += `${msg.content.ename}: ${msg.content.evalue}`;
                    };
                    await future.done;
                    return out;
                }""",
                code,
            )
        )

    def widget(self, n: int) -> Any:
        return self.page.locator(".ae-root").nth(n)

    def shot(self, path: Path, n: int | None = None) -> Path:
        target = self.page if n is None else self.widget(n)
        target.screenshot(path=str(path))
        return path


#: Every browser test's page size unless it tests another one: a laptop-sized JupyterLab window.
VIEWPORT = {"width": 1400, "height": 1100}


@contextlib.contextmanager
def browser_page(browser: Any) -> Iterator[Any]:
    """A page in a context of its own (cookies, storage, dialogs), at VIEWPORT and 1 CSS px per pixel."""
    context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    with browser_page(browser) as fresh:
        yield fresh


@pytest.fixture(scope="module")
def notebook_page(browser: Any, lab: Lab) -> Iterator[NotebookPage]:
    with browser_page(browser) as fresh:
        yield NotebookPage(fresh, lab)
