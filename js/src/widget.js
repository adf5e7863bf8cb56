// agent_explorer's widget front end (anywidget ESM). Python owns all state; this module draws the traitlets
// (`graph`, `frame`, `table`, `verification`, `comparison`, `usage_series`, `marks`) and sends intents: it
// sets `index` (debounced while scrubbing) and asks for table pages with `model.send`. Data is drawn as text.

import { debounce, formatNumber, h, replace } from "./dom.js";
import { GraphPanel } from "./graph.js";
import { icon } from "./icons.js";
import { drawBanner, drawComparison, drawMachines, drawStatusChip } from "./notices.js";
import { StatePanel } from "./state-panel.js";
import { EventTable } from "./table.js";
import { UsagePanel } from "./usage.js";
import { CoverageLayer } from "./coverage.js";
import { SearchPanel } from "./search.js";
import { createStaticModel } from "./static.js";
import { LineagePanel } from "./branches.js";
import { ComposerPanel } from "./composer.js";

const SPEEDS = [1, 2, 5, 10, 25, 50];

function render({ model, el }) {
  const off = [];
  const on = (name, fn) => {
    model.on(name, fn);
    off.push(() => model.off(name, fn));
  };
  const last = () => Math.max(0, (model.get("length") || 1) - 1);
  const setIndex = (i) => {
    const next = Math.max(0, Math.min(last(), Math.round(i)));
    if (next === model.get("index")) return;
    model.set("index", next);
    model.save_changes();
  };

  // -- header + divergence banner ------------------------------------------------------------------
  const title = h("span", { class: "ae-title" });
  const status = h("span", { class: "ae-chip", "data-testid": "verify-status" });
  const position = h("span", { class: "ae-position", "data-testid": "position" });
  const header = h("div", { class: "ae-header" }, title, status, h("span", { class: "ae-spacer" }), position);
  const banner = h("div", { class: "ae-banner", role: "alert", "data-testid": "divergence", hidden: true });
  const comparePanel = h("section", { class: "ae-panel ae-compare", "data-testid": "compare", hidden: true });
  const machinesPanel = h("div", { class: "ae-machines", "data-testid": "machines", hidden: true });

  // -- controls: step buttons, play, slider with marks ---------------------------------------------
  const btn = (label, titleText, fn, testid) =>
    h("button", { class: "ae-btn", title: titleText, "aria-label": titleText, onclick: fn, "data-testid": testid }, label);
  let playing = null;
  const play = btn(icon("play"), "Play / pause (space)", () => togglePlay(), "play");
  const speed = h("select", { class: "ae-input", title: "Playback speed (entries per second)", "aria-label": "Playback speed" }, SPEEDS.map((n) => h("option", { value: n }, `${n}/s`)));
  speed.value = "5";
  speed.addEventListener("change", () => {
    if (playing) {
      togglePlay();
      togglePlay();
    }
  });
  const slider = h("input", { class: "ae-slider", type: "range", min: 0, max: 0, step: 1, value: 0, "aria-label": "Log index", "data-testid": "slider" });
  const track = h("div", { class: "ae-track", "aria-hidden": "true" });
  const sendIndex = debounce((i) => setIndex(i), 60);
  let lastSent = 0;
  slider.addEventListener("input", () => {
    const i = Number(slider.value);
    position.textContent = positionText(i);
    // Trailing debounce, plus one send every 150 ms while dragging so the chart follows the thumb.
    const now = performance.now();
    if (now - lastSent > 150) {
      lastSent = now;
      sendIndex.cancel();
      setIndex(i);
    } else sendIndex(i);
  });
  slider.addEventListener("change", () => sendIndex.flush());
  const controls = h(
    "div",
    { class: "ae-controls" },
    btn(icon("first"), "First entry (Home)", () => setIndex(0), "first"),
    btn(icon("prev"), "Previous entry (←)", () => setIndex(model.get("index") - 1), "prev"),
    play,
    btn(icon("next"), "Next entry (→)", () => setIndex(model.get("index") + 1), "next"),
    btn(icon("last"), "Last entry (End)", () => setIndex(last()), "last"),
    h("div", { class: "ae-slider-wrap" }, track, slider),
    speed,
  );

  function togglePlay() {
    if (playing) {
      clearInterval(playing);
      playing = null;
      replace(play, icon("play"));
      play.classList.remove("on");
      return;
    }
    if (model.get("index") >= last()) setIndex(0);
    replace(play, icon("pause"));
    play.classList.add("on");
    playing = setInterval(() => {
      if (model.get("index") >= last()) togglePlay();
      else setIndex(model.get("index") + 1);
    }, 1000 / Number(speed.value));
  }

  // -- panels ---------------------------------------------------------------------------------------
  const graph = new GraphPanel();
  const table = new EventTable(model);
  const usage = new UsagePanel(model);
  const state = new StatePanel(model);
  const graphPanel = h("section", { class: "ae-panel ae-chart" }, graph.el);
  const coverage = new CoverageLayer(model, graph); // heatmap toggle in the chart toolbar
  graphPanel.appendChild(coverage.legend);
  const search = new SearchPanel(model, setIndex);
  const lineage = new LineagePanel(model); // the lines (recording + branches) beside the slider
  const composer = new ComposerPanel(model);

  const root = h(
    "div",
    { class: "ae-root", tabindex: 0, "data-lm-suppress-shortcuts": "true", "aria-label": "Agent run explorer" },
    header,
    banner,
    machinesPanel,
    controls,
    lineage.el,
    h("div", { class: "ae-main" }, graphPanel, state.el),
    composer.el,
    comparePanel,
    h("div", { class: "ae-bottom" }, table.el, usage.el),
    search.el,
  );
  // JupyterLab honours data-lm-suppress-shortcuts (Lumino skips its keymap inside); the class is the
  // older spelling some front ends still check.
  root.classList.add("lm-suppress-shortcuts");

  // -- keyboard: arrows step, shift+arrows jump 10, Home/End, space plays ---------------------------
  const onKey = (event) => {
    const target = event.target;
    const typing = target instanceof HTMLInputElement && target.type !== "range";
    if (typing || target instanceof HTMLSelectElement || target instanceof HTMLTextAreaElement) {
      event.stopPropagation(); // keep notebook command-mode shortcuts out of our inputs
      return;
    }
    const i = model.get("index");
    const jump = event.shiftKey ? 10 : 1;
    const keys = {
      ArrowRight: () => setIndex(i + jump),
      ArrowDown: () => setIndex(i + jump),
      ArrowLeft: () => setIndex(i - jump),
      ArrowUp: () => setIndex(i - jump),
      PageDown: () => setIndex(i + 100),
      PageUp: () => setIndex(i - 100),
      Home: () => setIndex(0),
      End: () => setIndex(last()),
      " ": () => togglePlay(),
    };
    const action = keys[event.key];
    if (!action || event.ctrlKey || event.metaKey || event.altKey) return;
    event.preventDefault();
    event.stopPropagation();
    action();
  };
  root.addEventListener("keydown", onKey);
  // Clicking anywhere in the widget (but not into an input) focuses it so the arrows work at once.
  root.addEventListener("pointerdown", (event) => {
    if (!(event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement || event.target instanceof HTMLButtonElement)) root.focus({ preventScroll: true });
  });

  // -- drawing from traitlets -----------------------------------------------------------------------
  function positionText(i) {
    return `index ${formatNumber(i)} / ${formatNumber(last())}`;
  }

  function drawInfo() {
    const info = model.get("info") || {};
    replace(title, info.machineId || "machine", h("span", { class: "ae-muted" }, info.machineVersion ? ` v${String(info.machineVersion).slice(0, 12)}` : ""), info.threadId ? h("span", { class: "ae-muted" }, ` · ${info.threadId}`) : null);
  }

  function drawTrack() {
    const n = Math.max(1, last());
    const v = model.get("verification") || {};
    const marks = model.get("marks") || {};
    const items = [];
    for (const [a, b] of v.ranges || []) {
      items.push(h("span", { class: "ae-mark divergent", style: `left:${(a / n) * 100}%;width:max(2px, ${((b - a) / n) * 100}%)`, title: a === b ? `divergent: ${a}` : `divergent: ${a}–${b}` }));
    }
    for (const [a, b] of marks.hitRanges || []) items.push(h("span", { class: "ae-mark hit-range", style: `left:${(a / n) * 100}%;width:max(2px, ${((b - a) / n) * 100}%)`, title: `context matches: ${a}–${b}` }));
    for (const i of marks.hits || []) items.push(h("span", { class: "ae-mark hit", style: `left:${(i / n) * 100}%`, title: `search hit: ${i}` }));
    for (const f of marks.forks || []) items.push(h("span", { class: "ae-mark fork", style: `left:${(f / n) * 100}%`, title: `fork after ${f}` }));
    replace(track, items);
  }

  function drawFrame() {
    const f = model.get("frame") || {};
    const i = model.get("index");
    if (document.activeElement !== slider || !slider.matches(":active")) slider.value = String(i);
    slider.max = String(last());
    position.textContent = positionText(i);
    if (!state.draw(f, i, (model.get("graph") || {}).labels || {})) return;
    graph.highlight(f.active || [], f.taken || []);
    usage.draw(f.usage, i);
    table.markCurrent(i);
    search.markCurrent(i);
    lineage.draw(model.get("lineage"), i);
  }

  function drawVerification() {
    const v = model.get("verification") || {};
    drawStatusChip(status, v);
    drawBanner(banner, v, setIndex);
    drawMachines(machinesPanel, v.machines, model.get("info") || {}, setIndex);
    drawTrack();
  }

  function drawComparisonPanel() {
    drawComparison(comparePanel, model.get("comparison") || {}, model.get("length") || 0, setIndex);
  }

  // -- wire up ---------------------------------------------------------------------------------------
  on("change:frame", drawFrame);
  on("change:index", () => {
    slider.value = String(model.get("index"));
    position.textContent = positionText(model.get("index"));
  });
  on("change:length", () => {
    slider.max = String(last());
    drawTrack();
  });
  on("change:verification", drawVerification);
  on("change:marks", drawTrack);
  on("change:info", drawInfo);
  on("change:comparison", drawComparisonPanel);
  on("change:table", () => table.draw(model.get("table"), model.get("index")));
  on("change:table_types", () => table.drawTypes(model.get("table_types")));
  on("change:usage_series", () => usage.drawSeries(model.get("usage_series"), model.get("length")));
  on("change:graph", () => graph.draw(model.get("graph")).then(() => coverage.draw()));
  on("change:coverage_data", () => coverage.draw());
  on("change:search_results", () => search.draw(model.get("search_results"), model.get("index")));
  on("change:usage_ledger", () => usage.drawLedger(model.get("usage_ledger")));
  on("change:lineage", () => lineage.draw(model.get("lineage"), model.get("index")));
  on("change:composer", () => composer.draw(model.get("composer")));

  el.classList.add("ae-host");
  el.appendChild(root);
  drawInfo();
  slider.max = String(last());
  table.drawTypes(model.get("table_types"));
  table.draw(model.get("table"), model.get("index"));
  usage.drawSeries(model.get("usage_series"), model.get("length"));
  usage.drawLedger(model.get("usage_ledger"));
  search.draw(model.get("search_results"), model.get("index"));
  lineage.draw(model.get("lineage"), model.get("index"));
  drawVerification();
  drawComparisonPanel();
  drawFrame();
  graph.draw(model.get("graph")).then(() => {
    coverage.draw();
    const f = model.get("frame") || {};
    graph.highlight(f.active || [], f.taken || []);
    root.dataset.ready = "true";
  });

  return () => {
    graph.disconnect();
    if (playing) clearInterval(playing);
    sendIndex.cancel();
    for (const fn of off) fn();
    root.removeEventListener("keydown", onKey);
  };
}

/** The static export's entry (`Explorer.to_html`): the same view over the exported data, no kernel. */
export function renderStatic(data, el) {
  return render({ model: createStaticModel(data), el });
}

export default { render };
