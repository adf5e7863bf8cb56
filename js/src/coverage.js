// @ts-check
// Coverage heatmap: toggles classes on the already-drawn statechart (never a re-layout). States and
// transitions get `ae-cov-N` (N = 0 never .. 4 hottest, levels computed in Python); never-taken transitions
// are dashed red. The toggle asks Python for counts (`{kind: "coverage"}`) the first time. Data stays text.

import { h, plural, replace } from "./dom.js";

const LEVEL_CLASSES = ["ae-cov-0", "ae-cov-1", "ae-cov-2", "ae-cov-3", "ae-cov-4"];

export class CoverageLayer {
  /** @param {import("./protocol").Model} model @param {import("./graph.js").GraphPanel} graph */
  constructor(model, graph) {
    this.model = model;
    this.graph = graph;
    this.on = false;
    /** @type {SVGElement[]} */
    this.marked = [];
    /** @type {Map<Element, string>} */
    this.tips = new Map(); // <a> element -> its own tooltip, restored when the heatmap is off
    this.button = h(
      "button",
      { class: "ae-btn ae-btn-small", title: "Coverage heatmap: how often each state was entered and each transition taken", "aria-label": "Toggle the coverage heatmap", "aria-pressed": "false", "data-testid": "coverage-toggle", onclick: () => this.toggle() },
      "coverage",
    );
    graph.toolbar.appendChild(this.button);
    this.legend = h("div", { class: "ae-coverage-legend", "data-testid": "coverage-legend", hidden: true });
  }

  toggle() {
    this.on = !this.on;
    this.button.classList.toggle("on", this.on);
    this.button.setAttribute("aria-pressed", String(this.on));
    const data = this.model.get("coverage_data");
    if (this.on && !data.states) this.model.send({ kind: "coverage" });
    this.draw();
  }

  /** Re-apply after the chart is (re)drawn or the counts change. */
  draw() {
    for (const el of this.marked) {
      el.classList.remove(...LEVEL_CLASSES, "ae-cov-never");
      el.removeAttribute("data-coverage");
    }
    for (const [a, title] of this.tips) a.setAttribute("xlink:title", title);
    this.tips.clear();
    this.marked = [];
    const data = this.model.get("coverage_data");
    const svg = this.graph.svg;
    if (svg) svg.classList.toggle("ae-coverage", this.on && !!data.states);
    if (!this.on || !data.states) {
      this.legend.hidden = !this.on;
      replace(this.legend, this.on ? h("span", { class: "ae-muted" }, "counting…") : null);
      return;
    }
    /**
     * @param {SVGElement} el @param {number} level  0..4 @param {number} count @param {boolean} never
     * @param {string} verb  "entered" or "taken"
     */
    const mark = (el, level, count, never, verb) => {
      el.classList.add(LEVEL_CLASSES[level] || LEVEL_CLASSES[0]);
      if (never) el.classList.add("ae-cov-never");
      el.setAttribute("data-coverage", String(count));
      this.marked.push(el);
      // Graphviz wraps a shape that has a tooltip in <a xlink:title>: the hover says how often, too.
      const a = /** @type {SVGAElement | null} Graphviz's SVG <a>, not HTML's */ (el.querySelector("a"));
      const title = a?.getAttribute("xlink:title");
      if (a && title !== null && title !== undefined && !this.tips.has(a)) {
        this.tips.set(a, title);
        a.setAttribute("xlink:title", `${title} · ${never ? `never ${verb}` : `${verb} ${count}×`}`);
      }
    };
    for (const [id, count] of Object.entries(data.states || {})) {
      const el = this.graph.nodes.get(id);
      if (el) mark(el, data.stateLevels?.[id] || 0, count, count === 0, "entered");
    }
    for (const [id, count] of Object.entries(data.transitions || {})) {
      for (const el of this.graph.edges.get(id) || []) mark(el, data.transitionLevels?.[id] || 0, count, count === 0, "taken");
    }
    const never = data.neverTaken || [];
    const labels = (this.model.get("graph")).labels || {};
    const taken = (data.totalTransitions || 0) - never.length;
    this.legend.hidden = false;
    replace(
      this.legend,
      h("span", { class: "ae-cov-scale", "aria-hidden": "true" }, LEVEL_CLASSES.slice(1).map((c) => h("span", { class: `ae-cov-swatch ${c}` }))),
      h("span", {}, `${plural(data.runs || 0, "run")}, ${plural(data.entries || 0, "entry", "entries")}: ${taken}/${data.totalTransitions || 0} transitions taken`),
      never.length ? h("span", { class: "ae-cov-never-list", "data-testid": "coverage-never" }, "never: ", never.slice(0, 12).map((id) => labels[id] || id).join(", "), never.length > 12 ? ` … +${never.length - 12}` : "") : h("span", { class: "ae-ok-text" }, "every transition taken"),
    );
  }
}
