"""Screenshots of each notebook's explorer widgets as a person first sees them (JupyterLab + Debian's Chromium).

Copies notebooks/ and sample_logs/ into a throwaway directory (so Run All can never touch the checkout), runs
every cell in a real JupyterLab, and writes one palette-compressed PNG per displayed widget. It also prints
the smallest on-screen size of the chart's node and edge labels, the figure the chart's layout is judged by.

    .venv/bin/python scripts/screenshots.py docs/screenshots --suffix after
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path(os.environ.get("AGENT_EXPLORER_CHROMIUM", "/usr/bin/chromium"))
NOTEBOOKS = {  # notebook -> names of the widgets it displays, top to bottom
    "01_explore_a_run.ipynb": ["01-support", "01-inbox-long"],
    "02_teaching_replay.ipynb": ["02-callback"],
    "03_postmortem.ipynb": ["03-support-divergent"],
    "04_what_if.ipynb": ["04-support-what-if"],
}

# Smallest on-screen label sizes (CSS px) of the drawn chart, and whether the whole chart is in view.
MEASURE = """(root) => {
  const svg = root.querySelector("svg.ae-svg");
  const stage = root.querySelector(".ae-graph-stage").getBoundingClientRect();
  const size = (t) => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a;
  const min = (sel) => Math.min(...[...svg.querySelectorAll(sel)].filter((t) => t.textContent.trim()).map(size));
  const chart = svg.querySelector("g.graph").getBoundingClientRect();
  const inView = chart.left >= stage.left - 1 && chart.right <= stage.right + 1
    && chart.top >= stage.top - 1 && chart.bottom <= stage.bottom + 1;
  return { node: min("g.node text"), edge: min("g.edge text"), inView,
           stage: [Math.round(stage.width), Math.round(stage.height)] };
}"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_lab(root: Path) -> tuple[subprocess.Popen[bytes], str]:
    token = secrets.token_hex(16)
    port = free_port()
    settings = root / ".lab-settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(root / ".jupyter"),
        "JUPYTER_RUNTIME_DIR": str(root / ".runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(root / ".lab-settings"),
    }
    command = [
        sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--port={port}",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=", "--ServerApp.port_retries=0",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    log = (root / "jupyter.log").open("wb")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        if process.poll() is not None:
            raise SystemExit(f"jupyter lab exited early; see {root / 'jupyter.log'}")
        try:
            with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as response:
                if response.status == 200:
                    return process, f"{url}/lab/tree/notebooks/{{}}?token={token}&reset"
        except OSError:
            pass
        if time.monotonic() > deadline:
            process.terminate()
            raise SystemExit("jupyter lab did not answer in 90 s")
        time.sleep(0.3)


def compress(path: Path) -> None:
    """Palette PNG: the widget's flat colours survive 256 colours, at a fraction of the bytes."""
    from PIL import Image

    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    small.save(path, optimize=True)


def shoot(out: Path, suffix: str) -> None:
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="ae-shots-"))
    shutil.copytree(ROOT / "notebooks", work / "notebooks")
    shutil.copytree(ROOT / "sample_logs", work / "sample_logs")
    process, url = start_lab(work)
    out.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
            for notebook, names in NOTEBOOKS.items():
                context = browser.new_context(viewport={"width": 1400, "height": 1800}, device_scale_factor=1)
                page = context.new_page()
                print(f"{notebook}: Run All", flush=True)
                page.goto(url.format(notebook))
                page.wait_for_function(
                    """() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
                      const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
                      return k && k.connectionStatus === "connected" && k.status === "idle"; }""",
                    timeout=90_000,
                )
                page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
                page.wait_for_function(
                    """(n) => { const w = window.jupyterapp.shell.currentWidget;
                      return w.content.widgets.every((c) => c.model.type !== "code" || c.model.executionCount)
                        && w.sessionContext.session.kernel.status === "idle"
                        && document.querySelectorAll(".ae-root").length >= n; }""",
                    arg=len(names),
                    timeout=240_000,
                )
                for n, name in enumerate(names):
                    root = page.locator(".ae-root").nth(n)
                    root.scroll_into_view_if_needed()
                    page.wait_for_function("(el) => el.dataset.ready === 'true'", arg=root.element_handle(), timeout=60_000)
                    page.wait_for_timeout(800)  # the chart's first view settles once the output is visible
                    figures = root.evaluate(MEASURE)
                    target = out / f"{name}-{suffix}.png"
                    root.screenshot(path=str(target))
                    compress(target)
                    print(f"{target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}: "
                          f"node labels >= {figures['node']:.1f} px, edge labels >= {figures['edge']:.1f} px, "
                          f"whole chart in view: {figures['inView']}, stage {figures['stage']}, "
                          f"{target.stat().st_size // 1024} KB")
                context.close()
            browser.close()
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="directory for the PNGs")
    parser.add_argument("--suffix", default="after", help="appended to each file name (before / after)")
    args = parser.parse_args()
    shoot(args.out.resolve(), args.suffix)


if __name__ == "__main__":
    main()
