"""Notebook front ends other than the suite's JupyterLab, run for real, and the checks every front end must pass.

`serve(...)` starts a server process (Jupyter Notebook 7, marimo, or an installed package's JupyterLab) on
127.0.0.1, waits until its URL answers and stops it afterwards. `exercise_explorer` is what "the widget works"
means in each of them: the chart renders, the slider scrubs, and the kernel answers the widget's messages.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SLIDE = """(el, i) => { el.value = String(i); el.dispatchEvent(new Event("input", {bubbles: true}));
                        el.dispatchEvent(new Event("change", {bubbles: true})); }"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def quiet_jupyter_env(root: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """Jupyter config and settings inside `root`: no user settings, no "fetch news?" toast over the widget, and
    JupyterLab exposing `window.jupyterapp` to the test (also when a server is started by `agent-explorer open`)."""
    made = dict(os.environ if env is None else env)
    config = root / ".jupyter"
    config.mkdir(parents=True, exist_ok=True)
    (config / "jupyter_lab_config.json").write_text(
        json.dumps({"LabApp": {"expose_app_in_browser": True, "news_url": None}})
    )
    made["JUPYTER_CONFIG_DIR"] = str(config)
    made["JUPYTER_RUNTIME_DIR"] = str(root / ".runtime")
    settings = root / ".lab-settings"
    notification = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True, exist_ok=True)
    notification.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    made["JUPYTERLAB_SETTINGS_DIR"] = str(settings)
    return made


def lab_command(root: Path, port: int, token: str) -> list[str]:
    """A throwaway JupyterLab on 127.0.0.1:`port` serving `root`, with no browser, no news and no port retries (the
    caller picked the port); `--allow-root` where containers run as root."""
    command = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--port={port}",
               f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}", "--LabApp.news_url=",
               "--ServerApp.port_retries=0"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    return command


@contextmanager
def serve(command: Sequence[str], *, cwd: Path, env: dict[str, str], log: Path,
          ready: str | None = None, url_pattern: str | None = None, timeout: float = 120) -> Iterator[str]:
    """Run `command` until the block ends; yield the URL it serves (`ready`, or the first `url_pattern` it logs)."""
    sink = log.open("wb")
    process = subprocess.Popen(list(command), cwd=cwd, env=env, stdout=sink, stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        url = ready
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{command[0]} exited early ({process.returncode}):\n{_tail(log)}")
            if url is None and url_pattern is not None:
                found = re.search(url_pattern, log.read_text(errors="replace"))
                url = found.group(0) if found else None
            if url is not None and _answers(url):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{command[0]} did not serve in {timeout:.0f} s:\n{_tail(log)}")
            time.sleep(0.3)
        yield url
    finally:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=20)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        sink.close()


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=3) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-3000:]


_KERNEL_IDLE = """() => {
    const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const kernel = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
    return kernel && kernel.connectionStatus === "connected" && kernel.status === "idle";
}"""
_ALL_RAN = """() => {
    const w = window.jupyterapp.shell.currentWidget;
    const cells = w.content.widgets.filter((c) => c.model.type === "code");
    return cells.every((c) => c.model.executionCount !== null) && w.sessionContext.session.kernel.status === "idle";
}"""


def run_all_jupyter_cells(page: Any, url: str) -> None:
    """Open a notebook in JupyterLab or Notebook 7 (both expose `window.jupyterapp`), run every cell and wait
    until all have run (the widget's requests queue behind running cells in the one kernel)."""
    page.goto(url)
    page.wait_for_function(_KERNEL_IDLE, timeout=120_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(_ALL_RAN, timeout=300_000, polling=500)


def exercise_explorer(page: Any, entries: list[dict[str, Any]], shots: Path, name: str, *,
                      step_to: str = "APPROVE", state: str = "refunding", filter_type: str = "@agent.usage") -> None:
    """The chart renders, scrubbing to the first `step_to` event lights up `state`, and a table filter on
    `filter_type` is answered by the kernel (defaults: the recorded support run)."""
    from playwright.sync_api import expect

    root = page.locator(".ae-root[data-ready='true']").first
    root.wait_for(timeout=120_000)
    try:
        svg = root.locator("svg.ae-svg")
        expect(svg).to_have_count(1, timeout=30_000)
        expect(svg.locator("g.node.state").first).to_be_visible()
        expect(svg.locator("g.node.active")).to_have_count(1, timeout=30_000)
        before = svg.locator("g.node.active text").all_text_contents()

        # Scrub: moving the slider asks the kernel for that index's frame; the highlight follows.
        target = next(i for i, e in enumerate(entries) if e["event"]["type"] == step_to)
        root.get_by_test_id("slider").evaluate(SLIDE, target)
        expect(root.get_by_test_id("position")).to_have_text(re.compile(rf"^index {target} / "), timeout=30_000)
        expect(root.get_by_test_id("state-value")).to_have_text(state, timeout=30_000)
        after = svg.locator("g.node.active text").all_text_contents()
        assert after == [state] and after != before, (before, after)

        # A message round trip: the type filter is a request the kernel answers with a new table page.
        count = sum(1 for e in entries if e["event"]["type"] == filter_type)
        select = root.locator("select[aria-label='Filter by event type']")
        select.select_option(label=f"{filter_type} ({count})")
        expect(root.locator("tr.ae-row")).to_have_count(count, timeout=30_000)
        assert set(root.locator("tr.ae-row td.ae-type").all_text_contents()) == {filter_type}
    finally:
        page.screenshot(path=str(shots / f"{name}.png"))
