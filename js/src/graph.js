// The statechart panel: renders the DOT Python built (once) with Graphviz-in-WebAssembly, then only toggles
// classes (`active`, `taken`) on the drawn SVG as the cursor moves. Zoom (wheel, buttons), pan (drag), fit.

import { instance } from "@viz-js/viz";
import { h, replace } from "./dom.js";

let vizPromise = null;
const MIN_SCALE = 0.85; // below this many screen px per chart unit, labels get hard to read
function viz() {
  vizPromise ??= instance();
  return vizPromise;
}

/** Remove anything executable from the rendered SVG (Graphviz escapes labels; this is belt and braces). */
function sanitize(svg) {
  for (const bad of svg.querySelectorAll("script, foreignObject, iframe, object, embed")) bad.remove();
  for (const el of [svg, ...svg.querySelectorAll("*")]) {
    for (const attr of [...el.attributes]) {
      const name = attr.name.toLowerCase();
      const value = attr.value.trim().toLowerCase();
      if (name.startsWith("on")) el.removeAttribute(attr.name);
      else if ((name === "href" || name.endsWith(":href")) && (value.startsWith("javascript:") || value.startsWith("data:"))) {
        el.removeAttribute(attr.name);
      }
    }
  }
}

export class GraphPanel {
  constructor() {
    this.svg = null;
    this.nodes = new Map(); // state id -> element
    this.edges = new Map(); // transition id -> [elements]
    this.lit = [];
    this.box = null; // the fitted viewBox [x, y, w, h]
    this.view = null;
    this.stage = h("div", { class: "ae-graph-stage" }, h("div", { class: "ae-muted ae-pad" }, "Drawing the statechart…"));
    const button = (label, title, fn) => h("button", { class: "ae-btn ae-btn-small", title, "aria-label": title, onclick: fn }, label);
    this.toolbar = h(
      "div",
      { class: "ae-graph-tools" },
      button("+", "Zoom in", () => this.zoom(0.8)),
      button("−", "Zoom out", () => this.zoom(1.25)),
      button("fit", "Fit the chart to the panel", () => {
        this.awaitingSize = false;
        this.fit();
      }),
    );
    this.el = h("div", { class: "ae-graph", "data-testid": "graph" }, this.toolbar, this.stage);
    this.installPanZoom();
  }

  async draw(graph) {
    if (!graph || !graph.dot) return;
    let svg;
    try {
      svg = (await viz()).renderSVGElement(graph.dot);
    } catch (error) {
      replace(this.stage, h("pre", { class: "ae-error-text" }, `Could not draw the statechart: ${error?.message ?? error}`));
      return;
    }
    sanitize(svg);
    svg.classList.add("ae-svg");
    const vb = svg.viewBox?.baseVal;
    this.box = vb && vb.width ? [vb.x, vb.y, vb.width, vb.height] : [0, 0, 100, 100];
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
    this.svg = svg;
    this.nodes.clear();
    this.edges.clear();
    const byId = (id) => svg.querySelector(`[id="${CSS.escape(id)}"]`);
    for (const [stateId, svgId] of Object.entries(graph.nodes || {})) {
      const el = byId(svgId);
      if (el) this.nodes.set(stateId, el);
    }
    for (const [transitionId, svgIds] of Object.entries(graph.edges || {})) {
      const els = svgIds.map(byId).filter(Boolean);
      if (els.length) this.edges.set(transitionId, els);
    }
    replace(this.stage, svg);
    if (this.pending) this.highlight(...this.pending);
    this.initialView();
  }

  /** Whole chart if it is readable at that size, else a readable zoom centred on the active states. */
  initialView() {
    const scale = this.fitScale();
    // Not laid out yet (anywidget renders before the output is attached; JupyterLab lays out cells
    // outside the viewport lazily): fit for now, decide again once it has a size and is visible.
    if (scale !== null && scale < MIN_SCALE && this.follow(true)) {
      this.awaitingSize = false;
      return;
    }
    this.awaitingSize = scale === null || scale < MIN_SCALE;
    this.fit();
  }

  /** Screen pixels per chart unit when the whole chart is fitted (null before layout). */
  fitScale() {
    const w = this.stage.clientWidth;
    const hgt = this.stage.clientHeight;
    if (!this.box || !w || !hgt) return null;
    return Math.min(w / this.box[2], hgt / this.box[3]);
  }

  /** Box of elements in the chart's own coordinates (the viewBox space). */
  boxOf(els) {
    const ctm = this.svg?.getScreenCTM();
    if (!ctm || !els.length) return null;
    const inverse = ctm.inverse();
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const el of els) {
      const r = el.getBoundingClientRect();
      if (!r.width && !r.height) continue; // not laid out (hidden tab, collapsed output)
      for (const [sx, sy] of [[r.left, r.top], [r.right, r.bottom]]) {
        const p = new DOMPoint(sx, sy).matrixTransform(inverse);
        x0 = Math.min(x0, p.x); y0 = Math.min(y0, p.y); x1 = Math.max(x1, p.x); y1 = Math.max(y1, p.y);
      }
    }
    return Number.isFinite(x0) ? [x0, y0, x1 - x0, y1 - y0] : null;
  }

  /** Keep the active atomic states in view: centre on them when they are outside (or when `force`).
   *  Returns false when they cannot be measured (not laid out). */
  follow(force = false) {
    if (!this.svg || !this.view) return false;
    const leaves = this.lit.filter((el) => el.classList.contains("node"));
    const box = this.boxOf(leaves.length ? leaves : this.lit);
    if (!box) return false;
    const [x, y, w, hgt] = this.view;
    const inside = box[0] >= x && box[1] >= y && box[0] + box[2] <= x + w && box[1] + box[3] <= y + hgt;
    if (inside && !force) return true;
    let nw = w;
    let nh = hgt;
    if (force) {
      nw = this.stage.clientWidth / MIN_SCALE;
      nh = this.stage.clientHeight / MIN_SCALE;
    }
    this.setView([box[0] + box[2] / 2 - nw / 2, box[1] + box[3] / 2 - nh / 2, nw, nh]);
    return true;
  }

  /** Mark active states and the transitions just taken; only class toggles, never a re-layout. */
  highlight(active, taken) {
    if (!this.svg) {
      this.pending = [active, taken];
      return;
    }
    for (const el of this.lit) el.classList.remove("active", "taken");
    this.lit = [];
    for (const id of active || []) {
      const el = this.nodes.get(id);
      if (el) {
        el.classList.add("active");
        this.lit.push(el);
      }
    }
    for (const id of taken || []) {
      for (const el of this.edges.get(id) || []) {
        el.classList.add("taken");
        this.lit.push(el);
      }
    }
    this.follow();
  }

  setView(box) {
    this.view = box;
    this.svg?.setAttribute("viewBox", box.map((n) => n.toFixed(2)).join(" "));
  }

  fit() {
    if (this.box) this.setView([...this.box]);
  }

  disconnect() {
    this.resizer?.disconnect();
    this.visibility?.disconnect();
  }

  zoom(factor, cx = 0.5, cy = 0.5) {
    if (!this.view) return;
    this.awaitingSize = false; // the user took the view over
    const [x, y, w, hgt] = this.view;
    const nw = Math.min(Math.max(w * factor, this.box[2] / 40), this.box[2] * 8);
    const nh = (hgt * nw) / w;
    this.setView([x + (w - nw) * cx, y + (hgt - nh) * cy, nw, nh]);
  }

  installPanZoom() {
    let drag = null;
    if (typeof ResizeObserver !== "undefined") {
      this.resizer = new ResizeObserver(() => {
        if (this.awaitingSize && this.fitScale() !== null) this.initialView();
      });
      this.resizer.observe(this.stage);
    }
    if (typeof IntersectionObserver !== "undefined") {
      this.visibility = new IntersectionObserver((seen) => {
        if (this.awaitingSize && seen.some((e) => e.isIntersecting)) this.initialView();
      });
      this.visibility.observe(this.stage);
    }
    this.stage.addEventListener(
      "wheel",
      (event) => {
        if (!this.view) return;
        event.preventDefault();
        const rect = this.stage.getBoundingClientRect();
        this.zoom(event.deltaY > 0 ? 1.15 : 1 / 1.15, (event.clientX - rect.left) / rect.width, (event.clientY - rect.top) / rect.height);
      },
      { passive: false },
    );
    this.stage.addEventListener("pointerdown", (event) => {
      if (!this.view || event.button !== 0) return;
      drag = { x: event.clientX, y: event.clientY, view: [...this.view] };
      this.awaitingSize = false;
      this.stage.setPointerCapture?.(event.pointerId);
      this.stage.classList.add("ae-dragging");
    });
    this.stage.addEventListener("pointermove", (event) => {
      if (!drag) return;
      const rect = this.stage.getBoundingClientRect();
      const [x, y, w, hgt] = drag.view;
      const scale = Math.max(w / rect.width, hgt / rect.height);
      this.setView([x - (event.clientX - drag.x) * scale, y - (event.clientY - drag.y) * scale, w, hgt]);
    });
    const end = () => {
      drag = null;
      this.stage.classList.remove("ae-dragging");
    };
    this.stage.addEventListener("pointerup", end);
    this.stage.addEventListener("pointercancel", end);
  }
}
