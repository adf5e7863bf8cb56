// The chart's overview: a small copy of the drawn statechart in the panel's corner, shown whenever part of the
// chart is out of view, with a frame for what the panel shows. Click or drag in it to move the view there. It
// copies the drawing once (ids and tooltips stripped, so nothing in the page is duplicated) and then only
// moves the frame and mirrors which states are active; it never lays anything out.

import { h, s } from "./dom.js";

const MAX_W = 168; // CSS px the overview may take
const MAX_H = 140;
const MAX_SHARE = 0.3; // and no more than this share of the panel's width or height

export class Minimap {
  /**
   * `onMove([x, y])` centres the chart's view on a point in chart units.
   * @param {(point: [number, number]) => void} onMove
   */
  constructor(onMove) {
    this.onMove = onMove;
    /** @type {SVGSVGElement | null} the copy, once drawn */
    this.svg = null;
    /** @type {SVGRectElement | null} */
    this.frame = null;
    /** @type {Map<string, Element>} */
    this.copies = new Map(); // svg id in the chart -> its copy here
    /** @type {Element[]} */
    this.lit = [];
    /** @type {number[]} the chart's viewBox [x, y, width, height] in chart units */
    this.box = [];
    /** @type {[number, number] | null} the panel's [width, height] the size was last fitted to */
    this.room = null;
    this.hiddenByUser = false; // the user hid it (the chart's "overview" control)
    this.el = h("div", {
      class: "ae-minimap",
      hidden: true,
      "data-testid": "minimap",
      role: "img",
      "aria-label": "Overview of the whole chart: click or drag to move the view",
      title: "The whole chart: click or drag to move the view",
    });
    this.installPointer();
  }

  /**
   * Copy the drawn chart (`box`: its viewBox in chart units).
   * @param {SVGSVGElement} chart @param {number[]} box
   */
  draw(chart, box) {
    this.copies.clear(); // a redraw (another graph) copies anew: the old copies are gone
    this.lit = [];
    const copy = /** @type {SVGSVGElement} */ (chart.cloneNode(true));
    for (const el of copy.querySelectorAll("[id]")) {
      if (el.matches("g.node, g.cluster")) this.copies.set(el.id, el);
      el.removeAttribute("id");
    }
    copy.removeAttribute("id");
    // Its own class names: selectors for the chart's `g.node` / `g.edge` (tests, coverage) never see the copy.
    for (const el of copy.querySelectorAll("[class]")) {
      const kind = ["node", "cluster", "edge"].find((c) => el.classList.contains(c));
      el.setAttribute("class", kind ? `ae-mm-${kind}` : "");
    }
    for (const el of copy.querySelectorAll("title, text")) el.remove();
    for (const a of copy.querySelectorAll("a")) {
      a.removeAttribute("xlink:title");
      a.removeAttribute("title");
    }
    copy.setAttribute("class", "ae-minimap-svg");
    copy.setAttribute("viewBox", box.join(" "));
    copy.setAttribute("preserveAspectRatio", "xMidYMid meet");
    copy.setAttribute("aria-hidden", "true");
    this.room = null;
    this.frame = s("rect", { class: "ae-minimap-frame" });
    copy.appendChild(this.frame);
    this.svg = copy;
    this.box = box;
    this.el.replaceChildren(copy);
  }

  /**
   * Show the frame of `view`; hidden when the whole chart is in view. `room`: the panel's [width, height].
   * @param {number[] | null | undefined} view  [x, y, width, height] in chart units @param {[number, number]} room
   */
  update(view, room) {
    if (!this.svg || !view) return;
    if (room?.[0] && (!this.room || room[0] !== this.room[0] || room[1] !== this.room[1])) {
      this.room = room;
      const [, , bw, bh] = this.box;
      const scale = Math.min(Math.min(MAX_W, room[0] * MAX_SHARE) / bw, Math.min(MAX_H, room[1] * MAX_SHARE) / bh);
      this.el.style.width = `${Math.max(40, Math.round(bw * scale))}px`;
      this.el.style.height = `${Math.max(28, Math.round(bh * scale))}px`;
    }
    const [x, y, w, hgt] = view;
    const [bx, by, bw, bh] = this.box;
    const whole = x <= bx + 0.5 && y <= by + 0.5 && x + w >= bx + bw - 0.5 && y + hgt >= by + bh - 0.5;
    this.el.hidden = whole || this.hiddenByUser;
    for (const [name, value] of Object.entries({ x, y, width: w, height: hgt })) this.frame?.setAttribute(name, value.toFixed(2));
  }

  /**
   * Mirror the chart's `active` states (elements of the chart, matched by id).
   * @param {Iterable<Element>} elements
   */
  mark(elements) {
    for (const el of this.lit) el.classList.remove("ae-mm-active");
    this.lit = [];
    for (const el of elements) {
      const copy = this.copies.get(el.id);
      if (copy) {
        copy.classList.add("ae-mm-active");
        this.lit.push(copy);
      }
    }
  }

  installPointer() {
    let dragging = false;
    /** @param {PointerEvent} event */
    const move = (event) => {
      const ctm = this.svg?.getScreenCTM();
      if (!ctm) return;
      const p = new DOMPoint(event.clientX, event.clientY).matrixTransform(ctm.inverse());
      this.onMove([p.x, p.y]);
    };
    this.el.addEventListener("pointerdown", (event) => {
      if (event.button !== 0) return;
      event.stopPropagation(); // the stage below would start a pan
      dragging = true;
      this.el.setPointerCapture?.(event.pointerId);
      move(event);
    });
    this.el.addEventListener("pointermove", (event) => {
      if (dragging) move(event);
    });
    const end = () => {
      dragging = false;
    };
    this.el.addEventListener("pointerup", end);
    this.el.addEventListener("pointercancel", end);
    this.el.addEventListener("wheel", (event) => event.stopPropagation(), { passive: true });
  }
}
