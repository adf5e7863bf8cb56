// The statechart panel: renders the DOT Python built with Graphviz-in-WebAssembly once, then only toggles
// classes (`active`, `taken`) on the drawn SVG as the cursor moves. Zoom (wheel, buttons), pan (drag), the
// whole chart, and an overview (minimap.js) whenever part of the chart is out of view.
//
// The one layout decision is made at the first draw, from the chart's shape: it is laid out top-to-bottom and
// left-to-right, and the direction that reads larger in the panel's width is kept; the panel then takes the
// height that shows the whole chart at that size. A chart whose labels would render under 9 px even so opens
// at a readable zoom around the active states, with the overview to find the rest.

import { instance } from "@viz-js/viz";
import { h, replace } from "./dom.js";
import { Minimap } from "./minimap.js";

/** @type {ReturnType<typeof instance> | null} */
let vizPromise = null;
function viz() {
  vizPromise ??= instance();
  return vizPromise;
}

const READABLE_PX = 9; // the smallest on-screen size of any label (node or edge) the chart opens at
const COMFORT_SCALE = 1; // past this screen px per chart point, a larger drawing reads no better
const MAX_SCALE = 1.1; // a small chart is not blown up past this (13 pt state labels at ~14 px)
const FOCUS_SCALE = 0.9; // a chart too large to read whole opens at this zoom around the active states
const STAGE_MIN = 300; // px heights the drawing area may take
const STAGE_MAX = 560;
// px of the widget outside the drawing area by default (header, slider, composer, table, search, a banner): the
// chart's default height leaves that much of the window, so the widget opens no taller than the window.
const RESERVED = 600;
const FALLBACK_WIDTH = 560; // the panel's width when it is not laid out at the first draw
const PAD = 8; // chart points of margin round the drawing
const DIRECTIONS = ["TB", "LR"];
const KEEP_MARGIN = 14; // chart points kept between the state in focus and the view's edge
const WIDE_STAGE = 0.8; // share of the window's height the drawing area may take when the chart is widened

/**
 * A part of the chart [x, y, width, height] in chart points (the SVG's viewBox space).
 * @typedef {number[]} Box
 */

/**
 * One layout of the chart: Graphviz's drawing in one direction and its extent.
 * @typedef {{rankdir: string, svg: SVGSVGElement, box: Box}} Layout
 */

/**
 * Remove anything executable from the rendered SVG (Graphviz escapes labels; this is belt and braces).
 * @param {SVGSVGElement} svg
 */
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

/** The drawing's extent [x, y, w, h] in chart points, with a margin. @param {SVGSVGElement} svg @returns {Box} */
function extentOf(svg) {
  const vb = svg.viewBox?.baseVal;
  const [x, y, w, hgt] = vb?.width ? [vb.x, vb.y, vb.width, vb.height] : [0, 0, 100, 100];
  return [x - PAD, y - PAD, w + 2 * PAD, hgt + 2 * PAD];
}

/** The tallest default drawing area: STAGE_MAX, less in a window too short to hold it and the rest of the widget. */
function stageMax() {
  const windowHeight = typeof window === "undefined" ? 0 : window.innerHeight;
  return windowHeight ? Math.max(STAGE_MIN, Math.min(STAGE_MAX, windowHeight - RESERVED)) : STAGE_MAX;
}

/** Screen px per chart point that shows all of `box` in `width` px and at most stageMax() px of height.
 *  @param {Box} box @param {number} width */
function wholeScale(box, width) {
  return Math.min(width / box[2], stageMax() / box[3], MAX_SCALE);
}

/** A state's name that tells regions apart: its id without the machine's, at most its last two keys
 *  ("alarm1_status.disabled" for "watch.statuses.alarm1_status.disabled"). @param {string} id */
function shortName(id) {
  const keys = id.replace(/^#/, "").split(".").slice(1);
  return keys.slice(-2).join(".");
}

/** The direction to keep: the larger readable drawing first, then the one that fills its panel best.
 *  @param {Layout[]} layouts @param {number} width */
function pickLayout(layouts, width) {
  const rated = layouts.map((layout) => {
    const scale = wholeScale(layout.box, width);
    const stage = Math.min(stageMax(), Math.max(STAGE_MIN, layout.box[3] * scale));
    const filled = (layout.box[2] * scale * layout.box[3] * scale) / (width * stage);
    return { layout, size: Math.round(Math.min(scale, COMFORT_SCALE) * 30), filled };
  });
  rated.sort((a, b) => b.size - a.size || b.filled - a.filled);
  return rated[0].layout;
}

/**
 * The same ids in the same order (active lists and taken lists are built in document order on both paths).
 * @param {string[] | null | undefined} a @param {string[] | null | undefined} b
 */
function sameIds(a, b) {
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export class GraphPanel {
  constructor() {
    /** @type {SVGSVGElement | null} */
    this.svg = null;
    /** @type {Map<string, SVGElement>} */
    this.nodes = new Map(); // state id -> element
    /** @type {Map<string, SVGElement[]>} */
    this.edges = new Map(); // transition id -> [elements]
    /** @type {SVGElement[]} */
    this.litEdges = []; // the taken transitions' elements (the lit states are `litStates`' keys)
    /** @type {Record<string, number>} */
    this.lines = {}; // transition id -> the line naming it on a state's shared self-loop
    /** @type {SVGTextElement[]} */
    this.litLines = [];
    /** @type {Box | null} */
    this.box = null; // the whole chart [x, y, w, h] in chart points
    /** @type {Map<Element, Box>} */
    this.boxes = new Map(); // element -> its box [x, y, w, h] in chart points, measured once per drawing
    /** @type {[string[], string[]] | null} */
    this.last = null; // the last highlight's [active, taken], re-applied to each new drawing
    /** @type {Array<() => void>} */
    this.layers = []; // callbacks re-applying other layers (recording) to each new drawing
    /** @type {Box | null} */
    this.view = null; // the part on view (the SVG's viewBox)
    this.readScale = READABLE_PX / 11; // screen px per point at which the smallest label is READABLE_PX
    this.userView = false; // the user zoomed, panned or asked for the whole chart: resizes keep their view
    /** @type {string | null} */
    this.autoHeight = null; // the height this panel last gave itself (a different one is the user's)
    /** @type {string | null} */
    this.target = null; // the state id kept in view: the one the last step entered (see pickTarget)
    /** @type {string[]} */
    this.shownActive = []; // the active state ids of the last highlight, to tell what a step entered
    this.offscreenKey = ""; // the active states last named as off screen, to redraw that line only on change
    this.wide = false; // the chart was given the explorer's whole width (the "wider" control)
    /** @type {Record<string, string[]>} */
    this.collapsedInside = {}; // state id inside a collapsed state -> [that state's id, the path to it]
    /** @type {Element[]} */
    this.collapsedBoxes = []; // the drawing's collapsed boxes (none unless the user collapsed a state)
    /** @type {Map<SVGElement, string>} */
    this.litStates = new Map(); // each lit state's element -> the state id it was lit for (a box: the first inside)
    /** @type {((state: string, collapse: boolean) => void) | null} */
    this.onCollapse = null; // (state id, collapse?) => void: set where Python can redraw (not the static export)
    this.stage = h("div", { class: "ae-graph-stage" }, h("div", { class: "ae-muted ae-pad" }, "Drawing the statechart…"));
    /** @param {string} label @param {string} title @param {() => void} fn */
    const button = (label, title, fn) => h("button", { class: "ae-btn ae-btn-small", title, "aria-label": title, onclick: fn }, label);
    this.wideButton = button("wider", "Give the chart the explorer's whole width", () => this.toggleWide());
    this.overviewButton = button("overview", "Hide or show the overview in the corner", () => this.toggleOverview());
    this.toolbar = h(
      "div",
      { class: "ae-graph-tools" },
      button("+", "Zoom in", () => this.zoom(0.8)),
      button("−", "Zoom out", () => this.zoom(1.25)),
      button("whole chart", "Show the whole chart", () => {
        this.awaitingSize = false;
        this.userView = true;
        this.fit();
      }),
      this.wideButton,
      this.overviewButton,
    );
    this.overviewButton.setAttribute("aria-pressed", "true");
    this.wideButton.setAttribute("aria-pressed", "false");
    // Active states out of view, each a button that brings it into view; and a note when labels are too small.
    this.offscreen = h("div", { class: "ae-graph-offscreen", "data-testid": "graph-offscreen" });
    this.scaleNote = h("span", { class: "ae-graph-note ae-muted", "data-testid": "graph-scale-note" });
    this.minimap = new Minimap((point) => this.centreOn(point));
    this.el = h(
      "div",
      { class: "ae-graph", "data-testid": "graph" },
      h("div", { class: "ae-graph-head" }, h("span", { class: "ae-panel-title" }, "Statechart"), h("span", { class: "ae-spacer" }), this.scaleNote, this.toolbar),
      this.offscreen,
      h("div", { class: "ae-graph-body" }, this.stage, this.minimap.el),
    );
    this.installPanZoom();
  }

  /** Lay the chart out (both directions, once) and keep the one that reads larger in this panel.
   *  @param {import("./protocol").Traits["graph"]} graph */
  async draw(graph) {
    if (!graph?.dot) return;
    let layouts;
    try {
      const engine = await viz();
      layouts = DIRECTIONS.map((rankdir) => {
        const svg = engine.renderSVGElement(/** @type {string} checked above */ (graph.dot), { graphAttributes: { rankdir } });
        return { rankdir, svg, box: extentOf(svg) };
      });
    } catch (error) {
      replace(this.stage, h("pre", { class: "ae-error-text" }, `Could not draw the statechart: ${error instanceof Error ? error.message : String(error)}`));
      return;
    }
    const chosen = pickLayout(layouts, this.stage.clientWidth || this.el.clientWidth || FALLBACK_WIDTH);
    const svg = chosen.svg;
    sanitize(svg);
    svg.classList.add("ae-svg");
    svg.dataset.rankdir = chosen.rankdir;
    this.box = chosen.box;
    this.rankdir = chosen.rankdir;
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
    const sizes = [...svg.querySelectorAll("g.node text, g.edge text")].map((t) => Number(t.getAttribute("font-size"))).filter((n) => n > 0);
    this.readScale = READABLE_PX / (sizes.length ? Math.min(...sizes) : 11);
    this.svg = svg;
    this.labelsFitted = false;
    this.userView = false;
    this.nodes.clear();
    this.edges.clear();
    this.boxes.clear();
    this.litEdges = [];
    this.litLines = [];
    this.litStates.clear();
    this.view = null; // the old drawing's view means nothing here: initialView picks this one's
    this.wantsFocus = false;
    this.lines = graph.lines || {};
    /** @param {string} id  Graphviz draws each state and transition as an SVG group with this id */
    const byId = (id) => /** @type {SVGElement | null} */ (svg.querySelector(`[id="${CSS.escape(id)}"]`));
    for (const [stateId, svgId] of Object.entries(graph.nodes || {})) {
      const el = byId(svgId);
      if (el) this.nodes.set(stateId, el);
    }
    this.collapsedInside = graph.collapsed || {};
    this.collapsedBoxes = [...svg.querySelectorAll("g.node.collapsed")];
    if (this.onCollapse) this.markCollapsible(graph.collapsible || []);
    for (const [transitionId, svgIds] of Object.entries(graph.edges || {})) {
      const els = /** @type {SVGElement[]} */ (svgIds.map(byId).filter(Boolean));
      if (els.length) this.edges.set(transitionId, els);
    }
    this.minimap.draw(svg, this.box);
    replace(this.stage, svg);
    if (this.last) this.highlight(...this.last);
    for (const layer of this.layers) layer();
    this.initialView();
  }

  /** The whole chart when it reads at READABLE_PX in this panel, else a readable zoom on the active states.
   *  Also gives the panel the height that shows the chart at that size (unless the user resized it). */
  initialView() {
    const width = this.stage.clientWidth;
    // Not laid out yet (anywidget renders before the output is attached; JupyterLab lays out cells
    // outside the viewport lazily): show it whole for now, decide again once it has a size.
    if (!this.box || !width || !this.stage.clientHeight) {
      this.awaitingSize = true;
      this.fit();
      return;
    }
    this.awaitingSize = false;
    this.fitLabels();
    this.sizePanel(width);
    // Too large to read whole: focus the active states (once they are known, see highlight).
    const fitScale = this.fitScale() ?? 0; // laid out (checked above), so a number
    this.wantsFocus = fitScale < this.readScale && !this.focus();
    if (fitScale >= this.readScale || this.wantsFocus) this.fit();
  }

  /** Height for the drawing area: the chart's height at the scale its width allows, within limits.
   *  Called once the chart is drawn (`box` set). @param {number} width */
  sizePanel(width) {
    const box = /** @type {Box} */ (this.box);
    const ownHeight = this.autoHeight === null || this.el.style.height === this.autoHeight;
    if (!ownHeight) return; // the user dragged the panel's resize handle: their height stands
    const scale = wholeScale(box, width);
    let wanted = scale >= this.readScale ? box[3] * scale : stageMax();
    let most = stageMax();
    if (this.wide) {
      // Widened: the whole chart's height when it reads whole at this width, else most of the window.
      most = Math.max(stageMax(), Math.round(window.innerHeight * WIDE_STAGE));
      const wideScale = Math.min(width / box[2], MAX_SCALE);
      wanted = wideScale >= this.readScale ? box[3] * wideScale : most;
    }
    const stage = Math.round(Math.min(most, Math.max(STAGE_MIN, wanted)));
    const chrome = this.el.offsetHeight - this.stage.clientHeight; // the head row and borders
    this.autoHeight = `${stage + chrome}px`;
    this.el.style.height = this.autoHeight;
  }

  /** A label drawn in a wider font than Graphviz measured (a system without Helvetica, Arial or Liberation
   *  Sans) is narrowed to its box once, so no state's name ever crosses its border. */
  fitLabels() {
    if (this.labelsFitted || !this.svg) return;
    this.labelsFitted = true;
    for (const node of this.svg.querySelectorAll("g.node")) {
      const shape = /** @type {SVGGraphicsElement | null} */ (node.querySelector("path, polygon, ellipse"));
      const texts = [...node.querySelectorAll("text")];
      if (!shape || !texts.length) continue;
      const room = shape.getBBox().width - 6;
      for (const text of texts) {
        if (room > 0 && text.getComputedTextLength() > room) {
          text.setAttribute("textLength", room.toFixed(1));
          text.setAttribute("lengthAdjust", "spacingAndGlyphs");
          this.boxes.clear(); // a label got narrower: measure the boxes afresh
        }
      }
    }
  }

  /** Screen pixels per chart point when the whole chart is fitted (null before layout). */
  fitScale() {
    const w = this.stage.clientWidth;
    const hgt = this.stage.clientHeight;
    if (!this.box || !w || !hgt) return null;
    return Math.min(w / this.box[2], hgt / this.box[3]);
  }

  /** Box of elements in the chart's own coordinates (the viewBox space). Each element is measured once per
   *  drawing (boxes), since moving the viewBox does not move anything in chart coordinates: following the
   *  active states on each slider step only compares numbers, never forces a layout.
   *  @param {Element[]} els @returns {Box | null} */
  boxOf(els) {
    if (!this.svg || !els.length) return null;
    if (els.some((el) => !this.boxes.has(el))) this.measure(els);
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const el of els) {
      const b = this.boxes.get(el);
      if (!b) continue; // not laid out (hidden tab, collapsed output): measured again when next needed
      x0 = Math.min(x0, b[0]); y0 = Math.min(y0, b[1]); x1 = Math.max(x1, b[0] + b[2]); y1 = Math.max(y1, b[1] + b[3]);
    }
    return Number.isFinite(x0) ? [x0, y0, x1 - x0, y1 - y0] : null;
  }

  /** Measure every state's box (and `extra`'s) in chart coordinates in one pass: one layout at most.
   *  @param {Element[]} [extra] */
  measure(extra = []) {
    const ctm = this.svg?.getScreenCTM();
    if (!ctm) return;
    const inverse = ctm.inverse();
    for (const el of new Set([...this.nodes.values(), ...extra])) {
      if (this.boxes.has(el)) continue;
      const r = el.getBoundingClientRect();
      if (!r.width && !r.height) continue; // not laid out: leave it unmeasured
      let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      for (const [sx, sy] of [[r.left, r.top], [r.right, r.bottom]]) {
        const p = new DOMPoint(sx, sy).matrixTransform(inverse);
        x0 = Math.min(x0, p.x); y0 = Math.min(y0, p.y); x1 = Math.max(x1, p.x); y1 = Math.max(y1, p.y);
      }
      this.boxes.set(el, [x0, y0, x1 - x0, y1 - y0]);
    }
  }

  /** Make each compound state's title (and each collapsed state's box) a click that collapses (expands) it.
   *  @param {string[]} states */
  markCollapsible(states) {
    for (const id of states) {
      const el = this.nodes.get(id);
      if (!el) continue;
      if (el.classList.contains("cluster")) {
        const title = /** @type {SVGTextElement | null} */ (el.querySelector(":scope > text, :scope > a > text, :scope > g > a > text"));
        if (!title) continue;
        title.classList.add("ae-collapse-title");
        title.dataset.collapse = id;
      } else if (el.classList.contains("collapsed") && !this.collapsedInside[id]) {
        el.dataset.expand = id;
      }
    }
  }

  /** A click (no drag) on a compound state's title or a collapsed box: ask Python to redraw without it.
   *  @param {EventTarget | null} target */
  clickCollapse(target) {
    if (!this.onCollapse || !(target instanceof Element)) return;
    const title = target.closest("[data-collapse]");
    if (title) {
      this.onCollapse(/** @type {string} found by it */ (title.getAttribute("data-collapse")), true);
      return;
    }
    const box = target.closest("[data-expand]");
    if (box) this.onCollapse(/** @type {string} found by it */ (box.getAttribute("data-expand")), false);
  }

  /** Write on each collapsed box's second line the deepest active state inside it. @param {string[]} active */
  nameCollapsed(active) {
    if (!this.collapsedBoxes.length) return; // the usual chart: nothing to name, nothing to walk on a step
    const deepest = new Map(); // collapsed state's element -> its deepest active path inside
    for (const id of active) {
      const inside = this.collapsedInside[id];
      const el = inside && this.nodes.get(id);
      if (!el) continue;
      const path = inside[1];
      const known = deepest.get(el);
      if (known === undefined || path.split(".").length > known.split(".").length) deepest.set(el, path);
    }
    for (const el of this.collapsedBoxes) {
      const line = el.querySelectorAll("text")[1];
      const text = deepest.has(el) ? `▸ ${deepest.get(el)}` : "▸ not active";
      if (line && line.textContent !== text) line.textContent = text;
    }
  }

  /** The active states' box (atomic ones when there are any), null when nothing can be measured. */
  activeBox() {
    const states = [...this.litStates.keys()];
    const leaves = states.filter((el) => el.classList.contains("node"));
    return this.boxOf(leaves.length ? leaves : states);
  }

  /** The state to keep in view: the deepest state the last step entered; while a step enters nothing drawn,
   *  the one kept before (if still active); else the first active atomic state. With parallel regions the
   *  box round everything active can centre on an inactive area, so the view follows one state, not a box.
   *  @param {string[]} active @returns {string | null} */
  pickTarget(active) {
    const before = new Set(this.shownActive);
    this.shownActive = active;
    const drawn = active.filter((id) => this.nodes.has(id));
    /** @param {string} id */
    const atomic = (id) => this.nodes.get(id)?.classList.contains("node");
    const entered = drawn.filter((id) => !before.has(id));
    const enteredLeaf = entered.find(atomic);
    if (enteredLeaf) return enteredLeaf;
    if (!entered.length && this.target && drawn.includes(this.target)) return this.target;
    return entered[entered.length - 1] ?? drawn.find(atomic) ?? drawn[0] ?? null; // not .at(-1): ES2022, the bundle is ES2020
  }

  /** The box to centre a w x hgt view on: the target state's, grown by the other active atomic states nearest
   *  to it for as long as all of them still fit (so a step inside the view keeps them all there when it can).
   *  @param {number} w @param {number} hgt @returns {Box | null} */
  keepBox(w, hgt) {
    const targetEl = this.target === null ? undefined : this.nodes.get(this.target);
    const anchor = targetEl ? this.boxOf([targetEl]) : null;
    if (!anchor) return this.activeBox();
    const cx = anchor[0] + anchor[2] / 2;
    const cy = anchor[1] + anchor[3] / 2;
    const others = [...this.litStates.keys()]
      .filter((el) => el !== targetEl && el.classList.contains("node"))
      .map((el) => this.boxOf([el]))
      .filter((b) => b !== null)
      .sort((a, b) => Math.hypot(a[0] + a[2] / 2 - cx, a[1] + a[3] / 2 - cy) - Math.hypot(b[0] + b[2] / 2 - cx, b[1] + b[3] / 2 - cy));
    let box = anchor;
    for (const b of others) {
      const x0 = Math.min(box[0], b[0]);
      const y0 = Math.min(box[1], b[1]);
      const x1 = Math.max(box[0] + box[2], b[0] + b[2]);
      const y1 = Math.max(box[1] + box[3], b[1] + b[3]);
      if (x1 - x0 + 2 * KEEP_MARGIN <= w && y1 - y0 + 2 * KEEP_MARGIN <= hgt) box = [x0, y0, x1 - x0, y1 - y0];
    }
    return box;
  }

  /** A w x hgt view centred on keepBox: the target in the middle, its active neighbours round it.
   *  @param {number} w @param {number} hgt */
  viewOnTarget(w, hgt) {
    const box = this.keepBox(w, hgt);
    if (!box) return null;
    return this.clamp([box[0] + box[2] / 2 - w / 2, box[1] + box[3] / 2 - hgt / 2, w, hgt]);
  }

  /** Open a chart too large to read whole at FOCUS_SCALE, on the state in focus. */
  focus() {
    const w = this.stage.clientWidth / Math.max(FOCUS_SCALE, this.readScale);
    const hgt = this.stage.clientHeight / Math.max(FOCUS_SCALE, this.readScale);
    const view = this.viewOnTarget(w, hgt);
    if (!view) return false;
    this.setView(view);
    return true;
  }

  /** Keep a view of the chart's size or smaller on the chart (no panning into empty space).
   *  Only with a chart drawn (`box` set). @param {Box} view @returns {Box} */
  clamp([x, y, w, hgt]) {
    const [bx, by, bw, bh] = /** @type {Box} */ (this.box);
    const cx = w >= bw ? bx + (bw - w) / 2 : Math.min(Math.max(x, bx), bx + bw - w);
    const cy = hgt >= bh ? by + (bh - hgt) / 2 : Math.min(Math.max(y, by), by + bh - hgt);
    return [cx, cy, w, hgt];
  }

  /** Move the view (same size) so `point` is at its centre: the overview's click. @param {number[]} point */
  centreOn([px, py]) {
    if (!this.view) return;
    this.userView = true;
    const [, , w, hgt] = this.view;
    this.setView(this.clamp([px - w / 2, py - hgt / 2, w, hgt]));
  }

  /** Keep the state in focus in view. The view stays still while it is fully on screen (a step inside the view
   *  never jumps); otherwise it recentres, at the same zoom, on it and as many active neighbours as fit. */
  follow() {
    if (!this.svg || !this.view) return;
    const targetEl = this.target === null ? undefined : this.nodes.get(this.target);
    const box = targetEl ? this.boxOf([targetEl]) : this.activeBox();
    if (!box) return;
    const [x, y, w, hgt] = this.visibleView();
    const inside = box[0] >= x && box[1] >= y && box[0] + box[2] <= x + w && box[1] + box[3] <= y + hgt;
    if (inside) return;
    const view = this.viewOnTarget(this.view[2], this.view[3]);
    if (view) this.setView(view);
  }

  /** Name the active atomic states out of view in the panel's head, each a button that brings it into view
   *  (the overview marks them too). Redrawn only when that set changes. */
  showOffscreen() {
    const view = this.view && this.visibleView();
    /** @type {Array<[string, SVGElement, Box]>} each active state out of view: its id, element and box */
    const out = [];
    if (view) {
      const [x, y, w, hgt] = view;
      for (const [el, id] of this.litStates) {
        if (!el.classList.contains("node")) continue;
        const b = this.boxOf([el]);
        if (b && !(b[0] >= x && b[1] >= y && b[0] + b[2] <= x + w && b[1] + b[3] <= y + hgt)) out.push([id, el, b]);
      }
    }
    const key = out.map(([id]) => id).join("\u0000");
    if (key === this.offscreenKey) return;
    this.offscreenKey = key;
    if (!out.length) {
      this.offscreen.replaceChildren();
      return;
    }
    const buttons = out.map(([id, el, b]) => {
      const own = this.collapsedInside[id] ? this.collapsedInside[id][0] : id; // a collapsed box: its state's name
      const name = shortName(own) || el.querySelector("text")?.textContent?.trim() || own;
      return h(
        "button",
        {
          class: "ae-btn ae-btn-small ae-offscreen-state",
          title: `${id}: active, out of view. Click to bring it into view`,
          onclick: () => {
            this.target = id;
            this.centreOn([b[0] + b[2] / 2, b[1] + b[3] / 2]);
          },
        },
        name,
      );
    });
    this.offscreen.replaceChildren(h("span", { class: "ae-muted" }, "Active, out of view:"), ...buttons);
  }

  /** The chart takes the explorer's whole width (the state panel moves below it) and more height, or goes back. */
  toggleWide() {
    this.wide = !this.wide;
    this.wideButton.setAttribute("aria-pressed", String(this.wide));
    this.wideButton.textContent = this.wide ? "narrower" : "wider";
    this.el.closest(".ae-main")?.classList.toggle("ae-chart-wide", this.wide);
    this.autoHeight = null; // give the panel a height for its new width
    this.el.style.height = "";
    if (this.box) {
      this.sizePanel(this.stage.clientWidth || this.el.clientWidth);
      if (!this.userView) this.initialView();
    }
  }

  /** Hide the overview (it covers a corner of the chart) or show it again. */
  toggleOverview() {
    this.minimap.hiddenByUser = !this.minimap.hiddenByUser;
    this.overviewButton.setAttribute("aria-pressed", String(!this.minimap.hiddenByUser));
    if (this.view) this.minimap.update(this.visibleView(), [this.stage.clientWidth, this.stage.clientHeight]);
  }

  /** Mark active states and the transitions just taken; only class toggles, never a re-layout.
   *  @param {string[]} active  state ids @param {string[]} taken  transition ids */
  highlight(active, taken) {
    this.last = [active, taken]; // draw() re-applies it to a new drawing
    if (!this.svg) return;
    for (const el of this.litStates.keys()) el.classList.remove("active");
    this.litStates.clear();
    this.clearEdges();
    this.target = this.pickTarget(active || []);
    for (const id of active || []) {
      const el = this.nodes.get(id);
      if (el && !this.litStates.has(el)) { // a collapsed box stands for many states: lit once
        el.classList.add("active");
        this.litStates.set(el, id);
      }
    }
    this.lightEdges(taken || []);
    this.nameCollapsed(active || []);
    this.minimap.mark([...this.litStates.keys()]);
    if (this.wantsFocus && !this.userView) this.wantsFocus = !this.focus();
    else this.follow();
    this.showOffscreen();
  }

  /** Unmark the transitions marked taken (and their lines). */
  clearEdges() {
    for (const el of this.litEdges) el.classList.remove("taken");
    for (const el of this.litLines) el.classList.remove("taken-line");
    this.litEdges = [];
    this.litLines = [];
  }

  /**
   * Mark the transitions just taken (and the line naming each on a shared self-loop).
   * @param {string[]} taken
   */
  lightEdges(taken) {
    for (const id of taken) {
      for (const el of this.edges.get(id) || []) {
        el.classList.add("taken");
        this.litEdges.push(el);
        const line = this.lines[id] === undefined ? null : el.querySelectorAll("text")[this.lines[id]];
        if (line) {
          line.classList.add("taken-line");
          this.litLines.push(line);
        }
      }
    }
  }

  /**
   * Light the active states of an index known before its frame arrives (the state track, on a slider move), in
   * the same frame as the input. Its taken transitions are the frame's to say: any lit for another index go.
   * Nothing is touched when exactly these states are lit and no transition is.
   * @param {string[]} active @param {number} index
   */
  lightStates(active, index) {
    const [lit, taken] = this.last || [null, []];
    if (!(this.svg && !taken?.length && sameIds(lit, active))) this.highlight(active, []);
    this.markIndex(index);
  }

  /**
   * The frame's highlight. When its states are the ones lit already (the track lit them on the input), only the
   * taken transitions change: the states, the view and the overview are not redrawn.
   * @param {string[]} active @param {string[]} taken @param {number | undefined} index
   */
  highlightFrame(active, taken, index) {
    const [lit, litTaken] = this.last || [null, []];
    if (this.svg && sameIds(lit, active)) {
      if (!sameIds(litTaken, taken)) {
        this.last = [active, taken];
        this.clearEdges();
        this.lightEdges(taken);
      }
    } else {
      this.highlight(active, taken);
    }
    this.markIndex(index);
  }

  /**
   * Say on the chart which index its highlight is for (`data-lit-index`): the frame's, or the slider's when the
   * state track lit it first. Tests and benchmarks/scrub.py read it; it is set with the classes, never alone.
   * @param {number | undefined} index
   */
  markIndex(index) {
    if (typeof index === "number" && this.el.dataset.litIndex !== String(index)) this.el.dataset.litIndex = String(index);
  }

  /** Call `apply` after every drawing, once this panel's highlight is back on it (layers over the chart).
   *  @param {() => void} apply */
  onDrawn(apply) {
    this.layers.push(apply);
  }

  /** @param {Box} box */
  setView(box) {
    this.view = box;
    this.svg?.setAttribute("viewBox", box.map((n) => n.toFixed(2)).join(" "));
    this.minimap.update(this.visibleView(), [this.stage.clientWidth, this.stage.clientHeight]);
    this.noteScale();
    this.showOffscreen();
  }

  /** Say when the smallest label is drawn under READABLE_PX (the whole of a large chart, or zoomed out). */
  noteScale() {
    const sw = this.stage.clientWidth;
    const sh = this.stage.clientHeight;
    if (!this.view || !sw || !sh) return;
    const px = (Math.min(sw / this.view[2], sh / this.view[3]) * READABLE_PX) / this.readScale;
    const text = px < READABLE_PX - 0.05 ? `labels at ${px.toFixed(1)} px: zoom in to read` : "";
    if (this.scaleNote.textContent !== text) this.scaleNote.textContent = text;
  }

  /** The part of the chart actually on screen: the viewBox widened to the stage's aspect ("meet").
   *  Only once there is a view. @returns {Box} */
  visibleView() {
    const [x, y, w, hgt] = /** @type {Box} */ (this.view);
    const sw = this.stage.clientWidth;
    const sh = this.stage.clientHeight;
    if (!sw || !sh) return /** @type {Box} */ (this.view);
    const scale = Math.min(sw / w, sh / hgt);
    const vw = sw / scale;
    const vh = sh / scale;
    return [x - (vw - w) / 2, y - (vh - hgt) / 2, vw, vh];
  }

  /** The whole chart, centred; a small chart at no more than MAX_SCALE (not blown up to the panel). */
  fit() {
    if (!this.box) return;
    const scale = this.fitScale();
    if (scale === null || scale <= MAX_SCALE) {
      this.setView([...this.box]);
      return;
    }
    const [x, y, w, hgt] = this.box;
    const vw = this.stage.clientWidth / MAX_SCALE;
    const vh = this.stage.clientHeight / MAX_SCALE;
    this.setView([x - (vw - w) / 2, y - (vh - hgt) / 2, vw, vh]);
  }

  disconnect() {
    this.resizer?.disconnect();
    this.visibility?.disconnect();
  }

  /** @param {number} factor  the view's new size / its size @param {number} [cx] @param {number} [cy]  the fixed point, as shares of the view */
  zoom(factor, cx = 0.5, cy = 0.5) {
    if (!this.view) return;
    this.awaitingSize = false; // the user took the view over
    this.userView = true;
    const [x, y, w, hgt] = this.view;
    const box = /** @type {Box} a view means a drawn chart */ (this.box);
    const nw = Math.min(Math.max(w * factor, box[2] / 40), box[2] * 8);
    const nh = (hgt * nw) / w;
    this.setView([x + (w - nw) * cx, y + (hgt - nh) * cy, nw, nh]);
  }

  installPanZoom() {
    /** @type {{x: number, y: number, view: Box, target: EventTarget | null, moved?: boolean} | null} a press on the stage, until released */
    let drag = null;
    if (typeof ResizeObserver !== "undefined") {
      this.resizer = new ResizeObserver(() => {
        if (!this.box || !this.stage.clientWidth) return;
        if (this.awaitingSize || !this.userView) this.initialView();
        else this.minimap.update(this.visibleView(), [this.stage.clientWidth, this.stage.clientHeight]);
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
      drag = { x: event.clientX, y: event.clientY, view: [...this.view], target: event.target };
      this.stage.setPointerCapture?.(event.pointerId);
      this.stage.classList.add("ae-dragging");
    });
    this.stage.addEventListener("pointermove", (event) => {
      if (!drag) return;
      if (!drag.moved && Math.abs(event.clientX - drag.x) + Math.abs(event.clientY - drag.y) < 3) return;
      drag.moved = true;
      this.awaitingSize = false;
      this.userView = true;
      const rect = this.stage.getBoundingClientRect();
      const [x, y, w, hgt] = drag.view;
      const scale = Math.max(w / rect.width, hgt / rect.height);
      this.setView([x - (event.clientX - drag.x) * scale, y - (event.clientY - drag.y) * scale, w, hgt]);
    });
    const end = () => {
      drag = null;
      this.stage.classList.remove("ae-dragging");
    };
    this.stage.addEventListener("pointerup", () => {
      if (drag && !drag.moved) this.clickCollapse(drag.target);
      end();
    });
    this.stage.addEventListener("pointercancel", end);
  }
}
