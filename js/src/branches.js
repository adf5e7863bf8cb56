// @ts-check
// The lineage beside the slider: the recording and every branch as a row on the slider's index scale, each fork
// drawn as a connector from its parent's row at the fork index, the line on view highlighted. Draws the
// `lineage` traitlet ({current, nodes: [{id, parent, forkedAt, length, appended, threadId}]}); clicking a row
// asks Python to check that line out. Names and thread ids are drawn as text.

import { formatNumber, h, replace } from "./dom.js";

const ROW = 18; // px; keep in step with .ae-line-row in widget.css

/** @typedef {import("./protocol").LineageNode} LineageNode */

/** Rows in tree order (each branch right under its parent, children in creation order), with depth.
 *  @param {LineageNode[]} nodes @returns {Array<{node: LineageNode, depth: number}>} */
function treeOrder(nodes) {
  /** @type {Map<string, LineageNode[]>} */
  const children = new Map();
  const roots = [];
  for (const node of nodes) {
    if (node.parent === null || node.parent === undefined) roots.push(node);
    else {
      if (!children.has(node.parent)) children.set(node.parent, []);
      children.get(node.parent)?.push(node);
    }
  }
  /** @type {Array<{node: LineageNode, depth: number}>} */
  const out = [];
  /** @param {LineageNode} node @param {number} depth */
  const visit = (node, depth) => {
    out.push({ node, depth });
    for (const child of children.get(node.id) || []) visit(child, depth + 1);
  };
  for (const root of roots) visit(root, 0);
  return out;
}

export class LineagePanel {
  /** @param {import("./protocol").Model} model */
  constructor(model) {
    this.model = model;
    this.rows = h("div", { class: "ae-lines", role: "list" });
    this.el = h(
      "div",
      { class: "ae-lineage", "data-testid": "lineage", hidden: true },
      h("div", { class: "ae-lineage-head" }, h("span", { class: "ae-section-label" }, "lines"), h("span", { class: "ae-muted ae-lineage-hint" }, "click a line to view it; entries left of a fork are shared with its parent")),
      this.rows,
    );
    /** @type {HTMLElement | null} the cursor on the line on view's row, moved per step by placeCursor */
    this.cursor = null;
    /** @type {(i: number) => string} the rows' index scale */
    this.pct = (i) => `${i}%`;
  }

  /** Every row (on change:lineage); a step only moves the cursor (placeCursor).
   * @param {import("./protocol").Traits["lineage"]} lineage @param {number} index */
  draw(lineage, index) {
    this.cursor = null;
    const nodes = (lineage?.nodes) || [];
    this.el.hidden = nodes.length < 2;
    if (this.el.hidden) {
      replace(this.rows);
      return;
    }
    const span = Math.max(1, ...nodes.map((n) => (n.length || 1) - 1));
    /** @param {number} i */
    const pct = (i) => `${(Math.max(0, Math.min(i, span)) / span) * 100}%`;
    this.pct = pct;
    const ordered = treeOrder(nodes);
    const rowOf = new Map(ordered.map(({ node }, k) => [node.id, k]));
    const current = lineage.current;
    const items = ordered.map(({ node, depth }, k) => {
      const isCurrent = node.id === current;
      const start = node.forkedAt === null || node.forkedAt === undefined ? 0 : node.forkedAt - 1;
      const end = Math.max(start, (node.length || 1) - 1);
      const track = h("div", { class: "ae-line-track" });
      if (node.parent !== null && node.parent !== undefined) {
        // The parent's entries [0, forkedAt) are shared: a faint stretch, then the connector up to the parent row.
        track.appendChild(h("span", { class: "ae-line-shared", style: `left:0;width:${pct(start)}` }));
        const up = k - (rowOf.get(node.parent) ?? k - 1);
        track.appendChild(h("span", { class: "ae-line-link", style: `left:${pct(start)};top:${-(up * ROW) + ROW / 2}px;height:${up * ROW}px`, title: `forked from ${node.parent} after index ${start}` }));
        track.appendChild(h("span", { class: "ae-line-fork", style: `left:${pct(start)}` }));
      }
      track.appendChild(h("span", { class: "ae-line-bar", style: `left:${pct(start)};width:calc(${pct(end)} - ${pct(start)})` }));
      if (isCurrent) {
        this.cursor = h("span", { class: "ae-line-cursor", style: `left:${pct(index)}`, title: `index ${index}` });
        track.appendChild(this.cursor);
      }
      const appended = node.appended ? ` · +${formatNumber(node.appended)}` : "";
      return h(
        "div",
        {
          class: `ae-line-row${isCurrent ? " current" : ""}`,
          role: "listitem",
          tabindex: 0,
          "data-line": node.id,
          "data-testid": `line-${node.id}`,
          title: node.threadId ? `thread ${node.threadId}` : node.id,
          "aria-current": isCurrent ? "true" : null,
          onclick: () => this.checkout(node.id),
          onkeydown: (/** @type {KeyboardEvent} */ event) => {
            if (event.key === "Enter") this.checkout(node.id);
          },
        },
        h("span", { class: "ae-line-label", style: `padding-left:${depth * 10}px` }, node.id),
        track,
        h("span", { class: "ae-muted ae-line-len" }, `${formatNumber(node.length || 0)}${appended}`),
      );
    });
    replace(this.rows, items);
  }

  /** @param {number} index */
  placeCursor(index) {
    if (!this.cursor) return;
    this.cursor.style.left = this.pct(index);
    this.cursor.title = `index ${index}`;
  }

  /** @param {string} name  the line's id in the lineage */
  checkout(name) {
    if ((this.model.get("lineage")).current === name) return;
    this.model.send({ kind: "checkout", branch: name });
  }
}
