// Usage: cumulative token/cost totals up to the cursor and a small plot of the run (points from Python,
// already down-sampled), with a marker at the current index.

import { formatNumber, h, replace, s } from "./dom.js";

const W = 240;
const H = 48;

export class UsagePanel {
  constructor() {
    this.totals = h("div", { class: "ae-kv" });
    this.plot = h("div", { class: "ae-spark" });
    this.el = h("section", { class: "ae-panel ae-usage", "data-testid": "usage" }, h("div", { class: "ae-panel-head" }, h("span", { class: "ae-panel-title" }, "Usage")), this.totals, this.plot);
    this.series = [];
    this.length = 1;
  }

  drawSeries(series, length) {
    this.series = series || [];
    this.length = Math.max(1, length || 1);
    this.redrawPlot(null);
  }

  redrawPlot(index) {
    if (!this.series.length) {
      replace(this.plot, h("span", { class: "ae-muted" }, "no @agent.usage records"));
      return;
    }
    const maxY = Math.max(1, ...this.series.map((p) => p[1]));
    const x = (i) => ((i / Math.max(1, this.length - 1)) * (W - 4) + 2).toFixed(1);
    const y = (v) => (H - 2 - (v / maxY) * (H - 6)).toFixed(1);
    let d = `M ${x(0)} ${y(0)}`;
    for (const [i, v] of this.series) d += ` H ${x(i)} V ${y(v)}`;
    d += ` H ${x(this.length - 1)}`;
    const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "ae-spark-svg", role: "img", "aria-label": "cumulative total tokens over the run" }, s("path", { d, class: "ae-spark-line" }));
    if (index !== null && index !== undefined) svg.appendChild(s("line", { x1: x(index), x2: x(index), y1: 0, y2: H, class: "ae-spark-cursor" }));
    replace(this.plot, svg);
  }

  draw(usage, index) {
    if (usage === null || usage === undefined) {
      replace(this.totals, h("span", { class: "ae-muted" }, "summing usage…"));
      return;
    }
    const rows = [];
    for (const [key, value] of Object.entries(usage || {})) {
      if (key === "byModel") continue;
      rows.push(h("span", { class: "ae-k" }, key), h("span", { class: "ae-v" }, formatNumber(value)));
    }
    const models = Object.entries((usage || {}).byModel || {});
    if (models.length) rows.push(h("span", { class: "ae-k ae-subhead" }, "totalTokens by model"), h("span", {}));
    for (const [model, totals] of models) {
      rows.push(h("span", { class: "ae-k ae-model", title: model }, model), h("span", { class: "ae-v" }, formatNumber(totals.totalTokens ?? 0)));
    }
    if (!rows.length) rows.push(h("span", { class: "ae-muted" }, "nothing spent yet"));
    replace(this.totals, rows);
    this.redrawPlot(index);
  }
}
