// The statechart panel: renders the DOT Python built (once) with Graphviz-in-WebAssembly, then only toggles
// classes (`active`, `taken`) on the drawn SVG as the cursor moves. Zoom (wheel, buttons), pan (drag), fit.

import { instance } from "@viz-js/viz";
import { h, replace } from "./dom.js";

let vizPromise = null;
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
      button("fit", "Fit the chart to the panel", () => this.fit()),
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
    this.fit();
    if (this.pending) this.highlight(...this.pending);
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
  }

  setView(box) {
    this.view = box;
    this.svg?.setAttribute("viewBox", box.map((n) => n.toFixed(2)).join(" "));
  }

  fit() {
    if (this.box) this.setView([...this.box]);
  }

  zoom(factor, cx = 0.5, cy = 0.5) {
    if (!this.view) return;
    const [x, y, w, hgt] = this.view;
    const nw = Math.min(Math.max(w * factor, this.box[2] / 40), this.box[2] * 8);
    const nh = (hgt * nw) / w;
    this.setView([x + (w - nw) * cx, y + (hgt - nh) * cy, nw, nh]);
  }

  installPanZoom() {
    let drag = null;
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
