// agent_explorer's widget front end (anywidget ESM). Python owns all state; this module draws the traitlets
// (`graph`, `frame`, `table`, `verification`, `comparison`, `usage_series`, `marks`) and sends intents: it
// sets `index` (debounced while scrubbing) and asks for table pages with `model.send`. Data is drawn as text.

import { debounce, formatNumber, h, replace, shortHash } from "./dom.js";
import { GraphPanel } from "./graph.js";
import { icon } from "./icons.js";
import { jsonTree } from "./json-tree.js";
import { EventTable } from "./table.js";
import { UsagePanel } from "./usage.js";

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
  const folded = new Map(); // context tree paths the user opened or closed, kept while scrubbing
  const table = new EventTable(model);
  const usage = new UsagePanel();
  const stateBody = h("div", { class: "ae-state-body" });
  const statePanel = h("section", { class: "ae-panel ae-state", "data-testid": "state" }, h("div", { class: "ae-panel-head" }, h("span", { class: "ae-panel-title" }, "State")), stateBody);
  const graphPanel = h("section", { class: "ae-panel ae-chart" }, graph.el);

  const root = h(
    "div",
    { class: "ae-root", tabindex: 0, "data-lm-suppress-shortcuts": "true", "aria-label": "Agent run explorer" },
    header,
    banner,
    machinesPanel,
    controls,
    h("div", { class: "ae-main" }, graphPanel, statePanel),
    comparePanel,
    h("div", { class: "ae-bottom" }, table.el, usage.el),
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
    for (const i of marks.hits || []) items.push(h("span", { class: "ae-mark hit", style: `left:${(i / n) * 100}%`, title: `search hit: ${i}` }));
    for (const f of marks.forks || []) items.push(h("span", { class: "ae-mark fork", style: `left:${(f / n) * 100}%`, title: `fork after ${f}` }));
    replace(track, items);
  }

  function drawVerification() {
    const v = model.get("verification") || {};
    status.className = "ae-chip";
    if (v.status === "ok") {
      status.classList.add("ok");
      status.textContent = "verified";
      status.title = "Every recorded state hash matches the replay";
    } else if (v.status === "diverged") {
      status.classList.add("bad");
      status.textContent = `${formatNumber(v.count)} divergent`;
      status.title = "Replay derived different states than the log recorded";
    } else if (v.status === "pending") {
      status.classList.add("pending");
      status.textContent = typeof v.progress === "number" ? `verifying… ${Math.floor(v.progress * 100)}%` : "verifying…";
    } else if (v.status === "error") {
      status.classList.add("bad");
      status.textContent = "verification failed";
      status.title = v.message || "";
    } else {
      status.textContent = "not verified";
    }
    banner.hidden = v.status !== "diverged";
    if (v.status === "diverged") {
      const d = v.detail || {};
      const eventType = d.event && typeof d.event === "object" ? d.event.type : null;
      const more = Math.max(0, (v.count || 0) - 1);
      const jump = h("button", { class: "ae-btn ae-btn-danger", "data-testid": "jump-divergence", onclick: () => setIndex(v.first) }, `Jump to ${v.first}`);
      const parts = [
        h("strong", {}, `Replay diverges at index ${v.first}`),
        eventType ? [" on ", h("code", {}, eventType)] : null,
        d.kind && d.kind !== "state" ? ` (${d.kind})` : null,
        h("div", { class: "ae-banner-hashes" }, "recorded ", h("code", { title: d.expectedHash || "" }, shortHash(d.expectedHash)), " ≠ replayed ", h("code", { title: d.actualHash || "" }, shortHash(d.actualHash)), more ? ` · ${formatNumber(more)} further divergent entr${more === 1 ? "y" : "ies"}` : " · no further divergences"),
      ];
      replace(banner, h("div", { class: "ae-banner-text" }, parts), jump);
    }
    drawMachines(v.machines);
    drawTrack();
  }

  function drawMachines(machines) {
    machinesPanel.hidden = !machines;
    if (!machines) return;
    const info = model.get("info") || {};
    const other = info.compareWith ? `machine v${String(info.compareWith).slice(0, 12)}` : "the other machine";
    if (machines.error) {
      replace(machinesPanel, h("div", { class: "ae-error-text" }, `Could not compare with ${other}: ${machines.error}`));
    } else if (machines.index === null || machines.index === undefined) {
      replace(machinesPanel, h("div", {}, `Compared with ${other}: it folds this log to the same states at every index.`));
    } else {
      replace(
        machinesPanel,
        h("div", {}, h("strong", {}, `Compared with ${other}: `), `the machines part ways at index ${machines.index}. `, h("button", { class: "ae-btn ae-btn-small", "data-testid": "jump-machines", onclick: () => setIndex(machines.index) }, `Jump to ${machines.index}`)),
        diffList(machines.diff),
      );
    }
  }

  function diffList(diff) {
    return h(
      "ul",
      { class: "ae-diff" },
      (diff || []).slice(0, 30).map((c) => h("li", {}, h("code", {}, Array.isArray(c.path) ? c.path.join(".") : String(c.path)), " ", h("span", { class: "ae-before" }, JSON.stringify(c.before) ?? "—"), " → ", h("span", { class: "ae-after" }, JSON.stringify(c.after) ?? "—"))),
    );
  }

  function section(label, ...content) {
    return h("div", { class: "ae-section" }, h("div", { class: "ae-section-label" }, label), ...content);
  }

  function drawFrame() {
    const f = model.get("frame") || {};
    const i = model.get("index");
    if (document.activeElement !== slider || !slider.matches(":active")) slider.value = String(i);
    slider.max = String(last());
    position.textContent = positionText(i);
    if (f.empty) {
      replace(stateBody, h("div", { class: "ae-muted" }, "empty log"));
      return;
    }
    if (f.pending) {
      // Python answers this index once its background fold gets there; show how far it is.
      const pct = Math.floor((100 * (f.built || 0)) / Math.max(1, f.length || 1));
      replace(
        stateBody,
        h("div", { class: "ae-pending", "data-testid": "pending" }, `Replaying up to index ${formatNumber(f.index)}… `, h("span", { class: "ae-muted" }, `${formatNumber(f.built || 0)} of ${formatNumber(f.length || 0)} entries folded (${pct}%)`)),
        section("event", h("code", { class: "ae-type" }, (f.entry || {}).type ?? "")),
      );
      return;
    }
    graph.highlight(f.active || [], f.taken || []);
    const labels = (model.get("graph") || {}).labels || {};
    const entry = f.entry || {};
    const hash = f.hash || {};
    const hashChip = hash.ok === false ? h("span", { class: "ae-chip bad", "data-testid": "hash-status" }, "hash mismatch") : hash.ok ? h("span", { class: "ae-chip ok", "data-testid": "hash-status" }, "hash ok") : h("span", { class: "ae-chip", "data-testid": "hash-status" }, "no hash");
    const blocks = [];
    if (f.error) blocks.push(h("div", { class: "ae-error-text" }, f.error));
    blocks.push(
      section("value", h("div", { class: "ae-value", "data-testid": "state-value" }, f.valueText ?? ""), h("div", { class: "ae-chips" }, f.status ? h("span", { class: `ae-chip status-${f.status}` }, f.status) : null, (f.tags || []).map((t) => h("span", { class: "ae-chip tag" }, t)))),
      section(
        "event",
        h("div", { class: "ae-event-line" }, h("code", { class: "ae-type", "data-testid": "event-type" }, entry.type ?? ""), h("span", { class: "ae-muted", title: entry.recordedAt || "" }, ` #${entry.index ?? i} · ${entry.recordedAt ?? ""}`)),
        (f.taken || []).length ? h("div", { class: "ae-taken" }, "took ", (f.taken || []).map((t) => h("code", { title: t }, labels[t] || t)).flatMap((c, k) => (k ? [", ", c] : [c]))) : h("div", { class: "ae-muted ae-taken" }, i === 0 ? "initial state" : entry.type === "@agent.usage" ? "usage record: journaled, not sent to the machine" : "ignored: no enabled transition in this state"),
        h("details", { class: "ae-event-json" }, h("summary", {}, "payload"), h("pre", { "data-testid": "event-json" }, entry.eventText ?? "", entry.eventTruncated ? "\n… (truncated)" : "")),
      ),
      section("context", f.context === null && f.contextNote ? h("div", { class: "ae-muted" }, f.contextNote) : jsonTree(f.context, { rootPath: ["context"], changed: f.changed || [], remembered: folded })),
    );
    if ((f.children || []).length) blocks.push(section("children", h("ul", { class: "ae-list" }, f.children.map((c) => h("li", {}, h("code", {}, c.id), c.src ? h("span", { class: "ae-muted" }, ` ← ${typeof c.src === "string" ? c.src : JSON.stringify(c.src)}`) : null, c.status ? h("span", { class: "ae-muted" }, ` (${c.status})`) : null)))));
    if ((f.effects || []).length) {
      blocks.push(section("effects owed", h("ul", { class: "ae-list", "data-testid": "effects" }, f.effects.map((e) => h("li", {}, h("span", { class: "ae-chip" }, e.kind ?? "?"), " ", h("code", { title: e.requestId || "" }, e.site ?? ""), e.detail ? h("span", { class: "ae-muted" }, ` · ${e.detail}`) : null)))));
    } else if (f.effectsNote) {
      blocks.push(section("effects owed", h("div", { class: "ae-muted" }, h("button", { class: "ae-btn ae-btn-small", "data-testid": "derive-effects", onclick: () => model.send({ kind: "effects" }) }, "derive"), " ", f.effectsNote)));
    }
    if (f.output !== undefined) blocks.push(section("output", jsonTree(f.output, { rootPath: ["output"] })));
    blocks.push(section("hash", h("div", { class: "ae-hash" }, hashChip, " recorded ", h("code", { title: hash.recorded || "" }, shortHash(hash.recorded)), " · replayed ", h("code", { title: hash.replayed || "" }, shortHash(hash.replayed)))));
    replace(stateBody, blocks);
    usage.draw(f.usage, i);
    table.markCurrent(i);
  }

  function drawComparison() {
    const c = model.get("comparison") || {};
    comparePanel.hidden = !Object.keys(c).length;
    if (comparePanel.hidden) return;
    const head = h("div", { class: "ae-panel-head" }, h("span", { class: "ae-panel-title" }, "Branch comparison"));
    const summary =
      c.index === null || c.index === undefined
        ? h("div", {}, `The branch (${formatNumber(c.lengthB)} entries, forked at ${c.forkedAt}) and this run (${formatNumber(c.lengthA)} entries) reach the same states.`)
        : h("div", {}, `This run (${formatNumber(c.lengthA)} entries) and the branch (${formatNumber(c.lengthB)} entries, forked at ${c.forkedAt}) first differ at index ${c.index}: ${c.reason}. `, c.index < (model.get("length") || 0) ? h("button", { class: "ae-btn ae-btn-small", onclick: () => setIndex(c.index) }, `Jump to ${c.index}`) : null);
    const span = Math.max(1, c.lengthA || 0, c.lengthB || 0);
    const pct = (i) => `${(Math.max(0, i) / span) * 100}%`;
    const lane = (label, length, testid) =>
      h(
        "div",
        { class: "ae-lane", "data-testid": testid },
        h("span", { class: "ae-lane-label" }, label),
        h(
          "div",
          { class: "ae-lane-track" },
          h("span", { class: "ae-lane-bar", style: `width:${pct(length)}` }),
          c.forkedAt !== null && c.forkedAt !== undefined ? h("span", { class: "ae-lane-mark fork", style: `left:${pct(c.forkedAt)}`, title: `fork: entries before ${c.forkedAt} are shared` }) : null,
          c.index !== null && c.index !== undefined ? h("span", { class: "ae-lane-mark diff", style: `left:${pct(c.index)}`, title: `first difference: ${c.index}` }) : null,
        ),
        h("span", { class: "ae-muted ae-lane-len" }, `${formatNumber(length)} entries`),
      );
    const lanes = h("div", { class: "ae-lanes" }, lane("this run", c.lengthA || 0, "lane-run"), lane("branch", c.lengthB || 0, "lane-branch"));
    const appended = ((c.branch || {}).appended || []).map((r) => h("span", { class: `ae-chip ${r.ignored ? "pending" : ""}`, title: r.ignored ? "ignored in that state" : "" }, `${r.index}: ${r.type}${r.ignored ? " (ignored)" : ""}`));
    replace(comparePanel, head, summary, lanes, appended.length ? h("div", { class: "ae-chips" }, "branch appended: ", appended) : null, (c.diff || []).length ? diffList(c.diff) : null);
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
  on("change:comparison", drawComparison);
  on("change:table", () => table.draw(model.get("table"), model.get("index")));
  on("change:table_types", () => table.drawTypes(model.get("table_types")));
  on("change:usage_series", () => usage.drawSeries(model.get("usage_series"), model.get("length")));
  on("change:graph", () => graph.draw(model.get("graph")));

  el.classList.add("ae-host");
  el.appendChild(root);
  drawInfo();
  slider.max = String(last());
  table.drawTypes(model.get("table_types"));
  table.draw(model.get("table"), model.get("index"));
  usage.drawSeries(model.get("usage_series"), model.get("length"));
  drawVerification();
  drawComparison();
  drawFrame();
  graph.draw(model.get("graph")).then(() => {
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

export default { render };
