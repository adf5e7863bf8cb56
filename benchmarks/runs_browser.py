"""The run list's first page in the browser at 100,000 threads (issue 25: < 1 s after the cell runs).

    .venv/bin/python benchmarks/runs_browser.py --threads 100000

Generates the store as benchmarks/runs.py does (forks of one 11-entry thread, timed apart), fills the per-user
cache for the "warm" case on a 2-process pool, then starts a throwaway JupyterLab and headless Chromium
(`tests/browser/servers.py`, as the browser tests) and, per case on a fresh kernel, runs one cell:
`Runs(url, support_agent)`. Measured: from that statement (the kernel's `time.time()`; the package's import, once
per kernel, is before it) to the moment
the page holds the first row of the list (the browser's `Date.now()` when `.ae-runs tbody tr` appears; one
machine, one clock). Cases: the cache cold (an empty folder) and warm (filled).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import json
import multiprocessing
import os
import secrets
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "browser"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from runs import build, uptime  # noqa: E402
from scrub import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, kernel, shut_kernels, write_notebook  # noqa: E402
from servers import free_port, lab_command, quiet_jupyter_env, run_all_jupyter_cells, serve  # noqa: E402

from agent_explorer import SqliteEventLogStore, summarize_runs  # noqa: E402
from agent_explorer.samples import support_agent  # noqa: E402

CELL = """import os, time
os.environ["AGENT_EXPLORER_CACHE_DIR"] = {cache!r}
from agent_explorer import Runs
from agent_explorer.samples import support_agent
t0 = time.time()  # the package imported already, as in a notebook that used it before
runs = Runs({url!r}, support_agent)
runs"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=100_000)
    args = parser.parse_args()
    print(f"uptime before: {uptime()}")
    with tempfile.TemporaryDirectory(prefix="runs-browser-") as tmp:
        root = Path(tmp)
        db = root / "runs.db"

        async def fill() -> float:
            store = SqliteEventLogStore(db, synchronous="NORMAL")
            try:
                return await build(store, args.threads)
            finally:
                await store.aclose()

        print(f"SQLite store of {args.threads:,} threads generated in {asyncio.run(fill()):.1f} s")
        url = f"sqlite:///{db}"
        warm = root / "cache-warm"
        os.environ["AGENT_EXPLORER_CACHE_DIR"] = str(warm)
        started = time.perf_counter()
        with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
            summarize_runs(url, support_agent, executor=pool)
        print(f"warm cache filled in {time.perf_counter() - started:.1f} s (2 processes)")
        from playwright.sync_api import sync_playwright

        token, port = secrets.token_hex(16), free_port()
        env = quiet_jupyter_env(root)
        # The kernel imports the package of this checkout (the one this script sits in), whatever is installed.
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
        command = lab_command(root, port, token)
        lab = f"http://127.0.0.1:{port}"
        with serve(command, cwd=root, env=env, log=root / "jupyter.log",
                   ready=f"{lab}/api/status?token={token}"), sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
            page = browser.new_context(viewport=VIEWPORT, device_scale_factor=1).new_page()
            for name, cache in (("cold", root / "cache-cold"), ("warm", warm)):
                write_notebook(root / f"{name}.ipynb", CELL.format(cache=str(cache), url=url))
                run_all_jupyter_cells(page, f"{lab}/lab/tree/{name}.ipynb?token={token}&reset")
                shown = page.wait_for_function(
                    "() => document.querySelector('.ae-runs tbody tr') ? Date.now() : null", timeout=120_000,
                    polling="raf").json_value()
                ran = float(json.loads(kernel(page, "import json; print(json.dumps(t0))").strip().splitlines()[-1]))
                rows = page.eval_on_selector_all(".ae-runs tbody tr", "rows => rows.length")
                print(f"  cache {name}: first page ({rows} rows) in the browser {shown / 1000 - ran:.3f} s after the "
                      f"cell started", flush=True)
                kernel(page, "runs.stop()")
                shut_kernels(lab, token)
            browser.close()
    print(f"uptime after: {uptime()}")


if __name__ == "__main__":
    main()
