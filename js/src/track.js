// @ts-check
// The marks on the slider's track: divergent runs (verification), search hits (a density strip when they
// would overlap), the table filter's hits, and fork points of the line on view. Each set comes from the
// traitlet of the panel that owns it.

import { h, replace } from "./dom.js";

/** Marks closer than this share of the track overlap: a set that dense is drawn as a density strip. */
const DENSE_BUCKETS = 200;

/**
 * @param {import("./context.js").Context} ctx
 */
export function mountTrack(ctx) {
  const { model } = ctx;
  const el = h("div", { class: "ae-track", "aria-hidden": "true", "data-testid": "track" });

  /** @param {number} i @param {number} n */
  const left = (i, n) => `${(i / n) * 100}%`;

  /**
   * Point marks, or (when more than the track can show apart) a strip of buckets shaded by how many marks fall
   * in each: a solid bar says nothing, a density strip says where the hits are.
   * @param {number[]} indices @param {number} n @param {string} kind @param {string} label
   */
  function points(indices, n, kind, label) {
    if (indices.length <= DENSE_BUCKETS / 2) {
      return indices.map((i) => h("span", { class: `ae-mark ${kind}`, style: `left:${left(i, n)}`, title: `${label}: ${i}` }));
    }
    const counts = new Array(DENSE_BUCKETS).fill(0);
    for (const i of indices) counts[Math.min(DENSE_BUCKETS - 1, Math.floor((i / Math.max(1, n)) * DENSE_BUCKETS))]++;
    const peak = Math.max(...counts);
    return counts.flatMap((count, b) => (count ? [h("span", {
      class: `ae-mark ${kind} density`,
      style: `left:${(b / DENSE_BUCKETS) * 100}%;width:${100 / DENSE_BUCKETS}%;opacity:${(0.25 + 0.75 * (count / peak)).toFixed(2)}`,
      title: `${count} ${label}${count === 1 ? "" : "s"} near ${Math.round((b / DENSE_BUCKETS) * n)}`,
    })] : []));
  }

  function draw() {
    const n = Math.max(1, ctx.last());
    const v = model.get("verification");
    const search = model.get("search_results");
    const table = model.get("table");
    const lineage = model.get("lineage");
    /** @type {HTMLElement[]} */
    const items = [];
    for (const [a, b] of v.ranges || []) {
      items.push(h("span", { class: "ae-mark divergent", style: `left:${left(a, n)};width:max(2px, ${((b - a) / n) * 100}%)`, title: a === b ? `divergent: ${a}` : `divergent: ${a}–${b}` }));
    }
    for (const [a, b] of search.ranges || []) items.push(h("span", { class: "ae-mark hit-range", style: `left:${left(a, n)};width:max(2px, ${((b - a) / n) * 100}%)`, title: `context matches: ${a}–${b}` }));
    items.push(...points(search.marks || [], n, "hit", "search hit"));
    items.push(...points(table.marks || [], n, "hit filter", "filter hit"));
    for (const f of lineage.forks || []) items.push(h("span", { class: "ae-mark fork", style: `left:${left(f, n)}`, title: `fork after ${f}` }));
    const held = /** @type {{ window?: [number, number] }} */ (model).window;
    if (held) {
      // A static export of part of the log: shade what the page does not hold, so the slider's snap back is expected.
      const [a, b] = held;
      if (a > 0) items.push(h("span", { class: "ae-mark outside", style: `left:0;width:${left(a, n)}`, title: `indices 0–${a - 1}: not in this export` }));
      if (b < n) items.push(h("span", { class: "ae-mark outside", style: `left:${left(b, n)};width:${((n - b) / n) * 100}%`, title: `indices ${b + 1}–${n}: not in this export` }));
    }
    replace(el, items);
  }

  for (const name of ["change:verification", "change:search_results", "change:table", "change:lineage", "change:length"]) ctx.on(name, draw);
  draw();
  return { el, draw };
}
