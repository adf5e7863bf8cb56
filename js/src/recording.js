// @ts-check
// The recording's side of a divergence, on the chart: at a divergent index Python sends the states the recording
// was in (`frame.recording`: from the compare_with machine's own fold, or inferred from what the recording
// journaled next). They get the `recording` class on their own SVG node elements, as the replay's active states
// get `active`, and the chart shows a legend naming both highlights. Only class toggles: never a re-layout.

import { h } from "./dom.js";

export class RecordingLayer {
  /** @param {{nodes: Map<string, Element>, onDrawn: (apply: () => void) => void}} graph the drawn chart (its state
   *  id -> node element map), which calls back after each drawing so the last frame is marked on the new one */
  constructor(graph) {
    this.graph = graph;
    /** @type {Element[]} */
    this.lit = [];
    /** @type {import("./protocol").Traits["frame"] | null} the frame last drawn */
    this.frame = null;
    graph.onDrawn(() => this.draw(this.frame));
    this.why = h("span", { class: "ae-muted", "data-testid": "legend-why" });
    this.legend = h(
      "div",
      { class: "ae-legend-sides", "data-testid": "legend-sides", hidden: true },
      h("span", {}, h("span", { class: "ae-legend-key recording" }), "recording"),
      h("span", {}, h("span", { class: "ae-legend-key replay" }), "replay"),
      this.why,
    );
  }

  /** @param {import("./protocol").Traits["frame"] | null} frame */
  draw(frame) {
    this.frame = frame;
    for (const el of this.lit) el.classList.remove("recording");
    this.lit = [];
    const side = frame?.recording;
    this.legend.hidden = !side;
    if (!side) return;
    for (const id of side.active || []) {
      const el = this.graph.nodes.get(id);
      if (el) {
        el.classList.add("recording");
        this.lit.push(el);
      }
    }
    this.why.textContent = side.source === "recorder" ? "· recording: the compare_with machine's own fold" : side.active.length ? "· recording: inferred from what it journaled next" : "· recording: unknown here";
    this.why.title = side.reason;
  }
}
