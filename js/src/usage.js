// @ts-check
// Usage: cumulative token/cost totals up to the cursor and a small plot of the run (points from Python,
// already down-sampled), with a marker at the current index. With the ledger (`usage_ledger`, sent when
// `ex.usage()` runs or "ledger" is pressed) the plot draws one line per model plus compared branches
// (dashed), and a table lists tokens (and cost) per state the machine was in. Data is drawn as text.

import { formatNumber, h, plural, replace, s } from "./dom.js";

const W = 240;
const H = 48;
const MODEL_CLASSES = 6;
const BRANCH_CLASSES = 4;

/** USD as people read small sums: $0.0030, $1.24, $1,204. @param {unknown} value  "—" unless a number */
function usd(value) {
  if (typeof value !== "number") return "—";
  const digits = value >= 100 ? 0 : value >= 1 ? 2 : 4;
  return `$${value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })}`;
}

export class UsagePanel {
  /** @param {import("./protocol").Model} model */
  constructor(model) {
    this.model = model;
    this.totals = h("div", { class: "ae-kv" });
    this.plot = h("div", { class: "ae-spark" });
    this.legend = h("div", { class: "ae-usage-legend", "data-testid": "usage-legend" });
    this.byState = h("div", { class: "ae-usage-states", "data-testid": "usage-by-state" });
    this.ledgerButton = h("button", { class: "ae-btn ae-btn-small", title: "Usage per model and per state, compared with the branches", "aria-label": "Show the usage ledger", "data-testid": "usage-ledger", onclick: () => model?.send({ kind: "usage-ledger" }) }, "ledger");
    this.el = h("section", { class: "ae-panel ae-usage", "data-testid": "usage" }, h("div", { class: "ae-panel-head" }, h("span", { class: "ae-panel-title" }, "Usage"), h("span", { class: "ae-spacer" }), this.ledgerButton), this.totals, this.plot, this.legend, this.byState);
    /** @type {import("./protocol").Traits["usage_series"]} [index, cumulative tokens] points */
    this.series = [];
    /** @type {import("./protocol").UsageLedgerView | null} */
    this.ledger = null;
    this.length = 1;
    /** @type {number | null} */
    this.index = null;
    /** @type {SVGElement | null} the plot drawn by drawPlot (null while there is none) */
    this.svg = null;
    /** @type {SVGElement | null} its cursor line, moved per step by placeCursor */
    this.cursor = null;
    /** @type {(i: number) => string} the plot's x scale */
    this.xOf = (i) => String(i);
  }

  /** @param {import("./protocol").Traits["usage_series"]} series @param {number} length */
  drawSeries(series, length) {
    this.series = series || [];
    this.length = Math.max(1, length || 1);
    this.drawPlot();
  }

  /** @param {import("./protocol").Traits["usage_ledger"]} ledger */
  drawLedger(ledger) {
    this.ledger = ledger?.series ? /** @type {import("./protocol").UsageLedgerView} */ (ledger) : null;
    this.drawPlot();
    if (!this.ledger) {
      replace(this.legend);
      replace(this.byState);
      return;
    }
    const models = Object.keys(this.ledger.series);
    const cost = this.ledger.hasCost;
    replace(
      this.legend,
      h("span", { class: "ae-usage-key", title: "every model together" }, h("span", { class: "ae-swatch ae-total-line" }), "all models"),
      models.map((name, k) => h("span", { class: "ae-usage-key", title: name }, h("span", { class: `ae-swatch ae-model-${k % MODEL_CLASSES}` }), name)),
      (this.ledger.branches || []).map((b, k) => h("span", { class: "ae-usage-key", title: b.label }, h("span", { class: `ae-swatch ae-branch-line ae-branch-${k % BRANCH_CLASSES}` }), `${b.label} (total)`)),
    );
    const rows = (this.ledger.byState || []).slice(0, 8);
    const upTo = typeof this.ledger.at === "number" ? `entries 0–${formatNumber(this.ledger.at)}` : "the whole run";
    replace(
      this.byState,
      rows.length
        ? h(
            "table",
            { class: "ae-mini-table" },
            h("caption", { class: "ae-muted" }, `ledger of ${upTo}`, this.ledger.cost !== null && this.ledger.cost !== undefined ? ` · ${usd(this.ledger.cost)}` : ""),
            h("thead", {}, h("tr", {}, h("th", {}, "state when spent"), h("th", {}, "calls"), h("th", {}, "tokens"), cost ? h("th", {}, "cost") : null)),
            h("tbody", {}, rows.map(([state, n, tokens, c]) => h("tr", {}, h("td", { title: state }, state), h("td", {}, formatNumber(n)), h("td", {}, formatNumber(tokens)), cost ? h("td", {}, c === null ? "—" : usd(Number(c))) : null))),
          )
        : null,
    );
  }

  /** The whole plot (run total, models, branches), rebuilt only when the series or the ledger change. */
  drawPlot() {
    this.svg = null;
    this.cursor = null;
    const ledgerLines = this.ledger ? Object.values(this.ledger.series) : [];
    const branchLines = this.ledger ? (this.ledger.branches || []).map((b) => b.series || []) : [];
    if (!this.series.length && !ledgerLines.length) {
      replace(this.plot, h("span", { class: "ae-muted" }, "no @agent.usage records"));
      return;
    }
    const all = [this.series, ...ledgerLines, ...branchLines];
    const maxY = Math.max(1, ...all.flatMap((line) => line.map((p) => p[1])));
    const maxX = Math.max(this.length - 1, ...all.flatMap((line) => line.map((p) => p[0])), 1);
    /** @param {number} i */
    const x = (i) => ((i / maxX) * (W - 4) + 2).toFixed(1);
    /** @param {number} v */
    const y = (v) => (H - 2 - (v / maxY) * (H - 6)).toFixed(1);
    /** @param {number[][]} points  [index, value] steps @param {number} end  the index the line runs to */
    const path = (points, end) => {
      let d = `M ${x(0)} ${y(0)}`;
      for (const [i, v] of points) d += ` H ${x(i)} V ${y(v)}`;
      return `${d} H ${x(end)}`;
    };
    const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "ae-spark-svg", role: "img", "aria-label": "cumulative tokens over the run" });
    branchLines.forEach((points, k) => {
      if (points.length) svg.appendChild(s("path", { d: path(points, points[points.length - 1][0]), class: `ae-spark-line ae-branch-line ae-branch-${k % BRANCH_CLASSES}` }));
    });
    svg.appendChild(s("path", { d: path(this.series, this.length - 1), class: "ae-spark-line ae-total-line" }));
    ledgerLines.forEach((points, k) => {
      svg.appendChild(s("path", { d: path(points, this.length - 1), class: `ae-spark-line ae-model-line ae-model-${k % MODEL_CLASSES}` }));
    });
    replace(this.plot, svg);
    this.svg = svg;
    this.xOf = x;
    this.placeCursor(this.index);
  }

  /** Per step only the cursor line moves (drawn on top of the lines, once there is an index). @param {number | null} index */
  placeCursor(index) {
    if (!this.svg || index === null || index === undefined) return;
    const at = this.xOf(index);
    if (!this.cursor) {
      const cursor = s("line", { x1: at, x2: at, y1: 0, y2: H, class: "ae-spark-cursor" });
      this.cursor = cursor;
      this.svg.appendChild(cursor);
    } else {
      this.cursor.setAttribute("x1", at);
      this.cursor.setAttribute("x2", at);
    }
  }

  /**
   * The totals up to the cursor (and their cost, with prices).
   * @param {import("./protocol").Frame["usage"] | undefined} usage @param {import("./protocol").CostView | null | undefined} cost
   * @param {number} index
   */
  draw(usage, cost, index) {
    this.index = index;
    if (usage === null || usage === undefined) {
      replace(this.totals, h("span", { class: "ae-muted" }, "summing usage…"));
      return;
    }
    const rows = [h("span", { class: "ae-k ae-subhead", "data-testid": "usage-scope" }, `up to index ${formatNumber(index)}`), h("span", {})];
    for (const [key, value] of Object.entries(usage || {})) {
      if (key === "byModel") continue;
      rows.push(h("span", { class: "ae-k" }, key), h("span", { class: "ae-v" }, formatNumber(value)));
    }
    if (cost) rows.push(h("span", { class: "ae-k" }, "cost"), h("span", { class: "ae-v", "data-testid": "usage-cost", title: cost.unpriced.length ? `no price for ${cost.unpriced.join(", ")}: not counted` : "from the explorer's prices (USD per million tokens)" }, usd(cost.total), cost.unpriced.length ? "+" : ""));
    const models = Object.entries(usage?.byModel || {});
    if (models.length) rows.push(h("span", { class: "ae-k ae-subhead" }, cost ? "tokens · cost by model" : "totalTokens by model"), h("span", {}));
    for (const [model, totals] of models) {
      const c = cost?.byModel[model];
      rows.push(h("span", { class: "ae-k ae-model", title: model }, model), h("span", { class: "ae-v" }, formatNumber(totals.totalTokens ?? 0), c !== undefined && c !== null ? ` · ${usd(c)}` : ""));
    }
    if (rows.length === 2) {
      const whole = this.series.length ? this.series[this.series.length - 1][1] : 0;
      rows.push(h("span", { class: "ae-muted", "data-testid": "usage-nothing" }, whole ? `nothing spent up to here (the run spends ${plural(whole, "token")} in all)` : "nothing spent in this run"));
    }
    replace(this.totals, rows);
    this.placeCursor(index);
  }
}
