"""Scrubbing in a real browser: slider input -> chart highlight changed, in JupyterLab and Debian's Chromium.

Run: .venv/bin/python benchmarks/scrub.py [--moves 30] [--drags 3] [--cases baseline,watch,100k,1m]

Starts a throwaway JupyterLab (its own config, runtime and settings dirs, a random token, a free port on
127.0.0.1, as the browser tests do: tests/browser/servers.py) and headless /usr/bin/chromium through Playwright,
opens one notebook per case and measures, in the page, from the `input` event's dispatch (performance.now())
to the first animation frame after the chart's highlight changed for that index (a MutationObserver on the
chart: its `active` classes and `data-lit-index`, the index the highlight is for, set with the classes). Once
the kernel has sent the line's state track (explorer/track.py) the chart lights a move from it in the input's
own task; the kernel's frame lands later. So each move is also timed to its frame landing (the state panel names
the frame's index): "highlight" and "frame lands", the same figure without a track.

- single moves: the slider set to a random index, then `change` (a click on the track), one at a time;
- drags: 60 `input` events 16 ms apart across the track, then `change` (a person dragging the thumb). Each
  input is timed to the first highlight of its index or a later one (what it eventually shows), and every
  animation frame of the drag counts as lagging when the highlight is older than the newest input dispatched
  two frames (33 ms) before it.

Cases: a bare anywidget round trip (the browser sets a trait, Python sets another the page observes; no chart:
the floor), the 76-node watch chart (tests/explorer/watch_chart.py, 500 steps), the 100,001-entry inbox
sample (`long_run_entries(20_000)`, as notebook 01 and the tests) and 1,000,001 entries (200,000 tickets).
Prints median / p95 / max per case and their ratios to the baseline measured in the same run, with the load
average, since the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from servers import free_port, lab_command, quiet_jupyter_env, run_all_jupyter_cells, serve

CHROMIUM = Path(os.environ.get("AGENT_EXPLORER_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1400, "height": 1100}  # the browser tests' laptop-sized window

ECHO = '''\
import anywidget, traitlets

class Echo(anywidget.AnyWidget):
    """The floor: a slider whose input sets `index`; Python answers by setting `shown`, which the page draws."""
    _esm = """
    export default { render({ model, el }) {
      const root = document.createElement("div"); root.className = "ae-echo";
      const slider = document.createElement("input"); slider.type = "range"; slider.min = "0";
      slider.max = "1000000"; slider.dataset.testid = "slider";
      const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg"); svg.classList.add("ae-svg");
      const mark = document.createElementNS("http://www.w3.org/2000/svg", "g"); svg.appendChild(mark);
      const here = document.createElement("span"); here.className = "ae-event-line";
      slider.addEventListener("input", () => { model.set("index", Number(slider.value)); model.save_changes(); });
      model.on("change:shown", () => { here.textContent = `#${model.get("shown")}`;
                                       mark.classList.remove("active"); mark.classList.add("active"); });
      root.append(slider, svg, here); el.appendChild(root); root.dataset.ready = "true";
    } };
    """
    index = traitlets.Int(0).tag(sync=True)
    shown = traitlets.Int(0).tag(sync=True)

    @traitlets.observe("index")
    def _moved(self, change):
        self.shown = change["new"]

w = Echo()
w'''

CASES: dict[str, tuple[str, int]] = {
    # name: (cell source, number of entries)
    "baseline": (ECHO, 1_000_001),
    "watch": ("from agent_explorer.explorer import Explorer\nfrom watch_chart import watch_machine, watch_run\n"
              "watch = watch_machine()\nw = Explorer(watch, watch_run(watch, 500))\nw", 501),
    "100k": ("from agent_explorer.explorer import Explorer\n"
             "from agent_explorer.samples.inbox import inbox_agent\n"
             "from agent_explorer.samples.long_run import long_run_entries\n"
             "w = Explorer(inbox_agent, list(long_run_entries(20_000)))\nw", 100_001),
    "1m": ("from agent_explorer.explorer import Explorer\n"
           "from agent_explorer.samples.inbox import inbox_agent\n"
           "from agent_explorer.samples.long_run import long_run_entries\n"
           "w = Explorer(inbox_agent, list(long_run_entries(200_000)))\nw", 1_000_001),
}

# In the page. `watch(root)` starts observing the widget: each change to the chart's classes, the index its
# highlight is for (`data-lit-index`, set with the classes, js/src/graph.js) or the state panel's text schedules
# one animation-frame callback that notes (time, index the chart shows, index the state panel shows). The chart's
# index is its `data-lit-index`; without one (the floor) the state panel's, which the chart then draws with.
HARNESS = """
(root) => {
  const svg = root.querySelector("svg.ae-svg");
  const chart = root.querySelector("[data-testid=graph]");
  const slider = root.querySelector("[data-testid=slider]");
  const shows = [];  // [frame time, index the chart shows, index the state panel shows]
  let pending = false;
  const panelIndex = () => {
    const line = root.querySelector(".ae-event-line");
    const m = line && /#(\\d+)/.exec(line.textContent || "");
    return m ? Number(m[1]) : -1;
  };
  const chartIndex = () => (chart && chart.dataset.litIndex !== undefined ? Number(chart.dataset.litIndex) : panelIndex());
  const observer = new MutationObserver(() => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; shows.push([performance.now(), chartIndex(), panelIndex()]); });
  });
  observer.observe(chart || svg, { attributes: true, attributeFilter: ["class", "data-lit-index"], subtree: true });
  const panel = root.querySelector(".ae-event-line")?.closest(".ae-panel, .ae-echo") || root;
  observer.observe(panel, { childList: true, characterData: true, subtree: true });
  const until = (ok, ms) => new Promise((resolve) => {
    const start = performance.now();
    const tick = () => (ok() || performance.now() - start > ms ? resolve(ok()) : requestAnimationFrame(tick));
    tick();
  });
  const set = (i, kinds) => { slider.value = String(i); for (const k of kinds) slider.dispatchEvent(new Event(k, { bubbles: true })); };
  // The first frame at or after t0 where column `col` (1: chart, 2: state panel) shows i.
  const first = (from, col, i) => shows.slice(from).find((s) => s[col] === i);
  window.__scrub = {
    async single(i) {
      const from = shows.length;
      const t0 = performance.now();
      set(i, ["input", "change"]);
      const ok = await until(() => first(from, 1, i) && first(from, 2, i), 10000);
      const lit = first(from, 1, i);
      const landed = first(from, 2, i);
      return ok ? [lit[0] - t0, landed[0] - t0] : null;
    },
    async drag(indices, gap) {
      const from = shows.length;
      const order = new Map(indices.map((i, n) => [i, n]));
      const sent = [];
      const frames = [];
      let done = false;
      const last = indices.length - 1;
      const final = () => first(from, 1, indices[last]) && first(from, 2, indices[last]);
      const ticker = () => { frames.push(performance.now()); if (!done) requestAnimationFrame(ticker); };
      requestAnimationFrame(ticker);
      await new Promise((resolve) => {
        let n = 0;
        const step = () => {
          sent.push(performance.now());
          set(indices[n], n === last ? ["input", "change"] : ["input"]);
          n += 1;
          if (n <= last) setTimeout(step, gap); else resolve();
        };
        step();
      });
      const ok = await until(final, 10000);
      done = true;
      const seen = (col) => shows.slice(from).map((s) => [s[0], order.has(s[col]) ? order.get(s[col]) : -1]);
      // Each input, timed to the first frame showing its index or a later one (what it eventually shows).
      const latencies = (col) => sent.map((t, n) => { const s = seen(col).find(([ts, j]) => j >= n && ts >= t); return s ? s[0] - t : null; });
      // A frame lags when the chart shows something older than the newest input dispatched two frames before it.
      const chartSeen = seen(1);
      const end = ok ? chartSeen.find(([, j]) => j === last)[0] : performance.now();
      let lagging = 0, counted = 0;
      for (const f of frames) {
        if (f < sent[0] || f > end) continue;
        counted += 1;
        let need = -1;
        for (let n = 0; n < sent.length && sent[n] <= f - 33.4; n++) need = n;
        let shown = -1;
        for (const [ts, j] of chartSeen) if (ts <= f) shown = Math.max(shown, j);
        if (need >= 0 && shown < need) lagging += 1;
      }
      return { ok, latencies: latencies(1), landed: latencies(2), frames: counted, lagging, highlights: chartSeen.length };
    },
  };
  return chartIndex();
}
"""


def stats(values: list[float]) -> tuple[float, float, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return statistics.median(ordered), p95, ordered[-1]


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def write_notebook(path: Path, source: str) -> None:
    cell = {"cell_type": "code", "id": "c0", "metadata": {}, "execution_count": None, "outputs": [],
            "source": source}
    path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "cells": [cell], "metadata": {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}}}))


def shut_kernels(url: str, token: str) -> None:
    """Stop every kernel of this throwaway server (the next case measures on a quiet kernel)."""
    with urllib.request.urlopen(f"{url}/api/kernels?token={token}", timeout=10) as response:
        kernels = json.load(response)
    for kernel in kernels:
        request = urllib.request.Request(f"{url}/api/kernels/{kernel['id']}?token={token}", method="DELETE")
        urllib.request.urlopen(request, timeout=30).close()


def kernel(page: Any, code: str) -> str:
    return str(page.evaluate("""async (code) => {
        const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
        const future = k.requestExecute({ code, store_history: false });
        let out = "";
        future.onIOPub = (msg) => {
            if (msg.header.msg_type === "stream") out += msg.content.text;
            if (msg.header.msg_type === "error") out += `${msg.content.ename}: ${msg.content.evalue}`;
        };
        await future.done;
        return out;
    }""", code))


def measure(page: Any, name: str, size: int, moves: int, drags: int, seed: int) -> dict[str, Any]:
    import random

    rng = random.Random(seed)
    root = page.locator(".ae-root, .ae-echo").first
    root.scroll_into_view_if_needed()
    if name != "baseline":
        kernel(page, "w.wait_verified()")  # the background fold is done: measure a settled explorer
    page.wait_for_timeout(500)
    root.evaluate(HARNESS)
    singles: list[float] = []
    singles_landed: list[float] = []
    missed = 0
    current = 0
    started = time.monotonic()
    for _ in range(moves):
        index = rng.randrange(size)
        while index == current:
            index = rng.randrange(size)
        page.wait_for_timeout(250)  # a person's separate clicks, not a burst
        took = page.evaluate("(i) => window.__scrub.single(i)", index)
        current = index
        if took is None:
            missed += 1
        else:
            singles.append(float(took[0]))
            singles_landed.append(float(took[1]))
    drag_lat: list[float] = []
    drag_landed: list[float] = []
    frames = lagging = 0
    for d in range(drags):
        page.wait_for_timeout(300)
        start = rng.randrange(size // 2)
        span = max(60, min(size - 1 - start, size // 3))
        indices = sorted({start + (span * n) // 59 for n in range(60)})
        if indices[0] == current:
            indices = indices[1:]
        out = page.evaluate("([ix, gap]) => window.__scrub.drag(ix, gap)", [indices, 16])
        current = indices[-1]
        if not out["ok"]:
            missed += 1
        drag_lat += [float(v) for v in out["latencies"] if v is not None]
        drag_landed += [float(v) for v in out["landed"] if v is not None]
        frames += int(out["frames"])
        lagging += int(out["lagging"])
        del d
    tracked = name == "baseline" or kernel(page, "print(bool(w.state_track))").strip() == "True"
    return {"case": name, "entries": size, "singles": singles, "drag": drag_lat, "singles_landed": singles_landed,
            "drag_landed": drag_landed, "frames": frames, "lagging": lagging, "missed": missed, "tracked": tracked,
            "seconds": time.monotonic() - started, "load": load()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--moves", type=int, default=30)
    parser.add_argument("--drags", type=int, default=3)
    parser.add_argument("--cases", default="baseline,watch,100k,1m")
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--json", action="store_true", help="also print the raw figures as JSON")
    args = parser.parse_args()
    names = [c for c in args.cases.split(",") if c]
    unknown = [c for c in names if c not in CASES]
    if unknown or not CHROMIUM.exists():
        print(f"error: unknown case {unknown}" if unknown else f"error: {CHROMIUM} is missing", file=sys.stderr)
        sys.exit(2)
    from playwright.sync_api import sync_playwright

    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="scrub-bench-") as tmp:
        lab_root = Path(tmp)
        token, port = secrets.token_hex(16), free_port()
        env = quiet_jupyter_env(lab_root)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests" / "explorer"), env.get("PYTHONPATH", "")])
        command = lab_command(lab_root, port, token)
        url = f"http://127.0.0.1:{port}"
        with serve(command, cwd=lab_root, env=env, log=lab_root / "jupyter.log",
                   ready=f"{url}/api/status?token={token}"), sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
            context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
            page = context.new_page()
            for name in names:
                source, size = CASES[name]
                write_notebook(lab_root / f"{name}.ipynb", source)
                opened = time.monotonic()
                run_all_jupyter_cells(page, f"{url}/lab/tree/{name}.ipynb?token={token}&reset")
                page.wait_for_selector(".ae-root[data-ready=true], .ae-echo[data-ready=true]", timeout=120_000)
                print(f"{name}: opened in {time.monotonic() - opened:.0f} s (load {load()})", flush=True)
                results.append(measure(page, name, size, args.moves, args.drags, args.seed))
                shut_kernels(url, token)
            browser.close()
    report(results, args.json)


def report(results: list[dict[str, Any]], raw: bool) -> None:
    """Per case and kind: input -> the chart's highlight of that index (from the state track when the kernel sent
    one, else from the frame), its ratio to the floor, and input -> the kernel's frame landing (the state panel)."""
    base = next((r for r in results if r["case"] == "baseline"), None)
    print(f"\n{'case':<9} {'kind':<7} {'n':>4} {'highlight median / p95 / max':>30}  {'x floor (med/p95)':>17}  "
          f"{'frame lands median / p95':>25}  {'lagging':>9}  track  load")
    for r in results:
        for kind in ("singles", "drag"):
            values = r[kind]
            if not values:
                continue
            med, p95, top = stats(values)
            ratio = ""
            if base is not None and base[kind]:
                bmed, bp95, _ = stats(base[kind])
                ratio = f"{med / bmed:.2f}x / {p95 / bp95:.2f}x"
            landed = r[f"{kind}_landed"]
            lmed, lp95, _ = stats(landed) if landed else (float("nan"), float("nan"), 0.0)
            lag = f"{r['lagging']}/{r['frames']}" if kind == "drag" else ""
            print(f"{r['case']:<9} {kind:<7} {len(values):>4} {med:>8.1f} / {p95:>6.1f} / {top:>6.1f} ms  {ratio:>17}  "
                  f"{lmed:>10.1f} / {lp95:>6.1f} ms  {lag:>9}  {'yes' if r['tracked'] else 'no':<5}  {r['load']}")
        if r["missed"]:
            print(f"{r['case']}: {r['missed']} moves/drags never showed their index within 10 s")
    if raw:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
