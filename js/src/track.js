// @ts-check
// The marks on the slider's track: divergent runs (verification), search hits (a density strip when they
// would overlap), the table filter's hits, and fork points of the line on view. Each set comes from the
// traitlet of the panel that owns it, in a layer of its own that only that traitlet (or the length) redraws.

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

  /** @param {number} a @param {number} b @param {number} n */
  const span = (a, b, n) => `left:${left(a, n)};width:max(2px, ${((b - a) / n) * 100}%)`;

  /**
   * One layer per source, each redrawn only when its own trait (or the track's length) changes, and then only
   * when its marks differ from the ones last drawn: the table is re-sent on every page turn, the search results
   * on every progress tick, and a long run has thousands of marks. Layer order is paint order. (`marks: any`: each
   * layer's marks have their own shape, each build annotates it, and a build taking one shape is no build of unknown.)
   * @type {Record<string, {events: string[], marks: () => unknown, build: (marks: any, n: number) => HTMLElement[]}>}
   */
  const sources = {
    divergent: {
      events: ["change:verification"],
      marks: () => model.get("verification").ranges || [],
      build: (/** @type {[number, number][]} */ ranges, n) => ranges.map(([a, b]) => h("span", { class: "ae-mark divergent", style: span(a, b, n), title: a === b ? `divergent: ${a}` : `divergent: ${a}–${b}` })),
    },
    search: {
      events: ["change:search_results"],
      marks: () => {
        const search = model.get("search_results");
        return [search.ranges || [], search.marks || []];
      },
      build: (/** @type {[[number, number][], number[]]} */ [ranges, marks], n) => [
        ...ranges.map(([a, b]) => h("span", { class: "ae-mark hit-range", style: span(a, b, n), title: `context matches: ${a}–${b}` })),
        ...points(marks, n, "hit", "search hit"),
      ],
    },
    filter: {
      events: ["change:table"],
      marks: () => model.get("table").marks || [],
      build: (/** @type {number[]} */ marks, n) => points(marks, n, "hit filter", "filter hit"),
    },
    forks: {
      events: ["change:lineage"],
      marks: () => model.get("lineage").forks || [],
      build: (/** @type {number[]} */ forks, n) => forks.map((f) => h("span", { class: "ae-mark fork", style: `left:${left(f, n)}`, title: `fork after ${f}` })),
    },
    window: {
      events: [],
      marks: () => /** @type {{ window?: [number, number] }} */ (model).window || null,
      build: (/** @type {[number, number] | null} */ held, n) => {
        if (!held) return [];
        // A static export of part of the log: shade what the page does not hold, so the slider's snap back is expected.
        const [a, b] = held;
        const items = [];
        if (a > 0) items.push(h("span", { class: "ae-mark outside", style: `left:0;width:${left(a, n)}`, title: `indices 0–${a - 1}: not in this export` }));
        if (b < n) items.push(h("span", { class: "ae-mark outside", style: `left:${left(b, n)};width:${((n - b) / n) * 100}%`, title: `indices ${b + 1}–${n}: not in this export` }));
        return items;
      },
    },
  };
  /** @type {Record<string, HTMLElement>} */
  const layers = {};
  /** @type {Record<string, string>} what each layer last drew (its marks and the track's length), as JSON */
  const drawn = {};
  for (const name of Object.keys(sources)) {
    layers[name] = h("span", { class: "ae-track-layer", dataset: { layer: name } });
    el.appendChild(layers[name]);
  }

  /** @param {string} name */
  function drawLayer(name) {
    const n = Math.max(1, ctx.last());
    const marks = sources[name].marks();
    const key = JSON.stringify([n, marks]);
    if (drawn[name] === key) return;
    drawn[name] = key;
    replace(layers[name], sources[name].build(marks, n));
  }

  function draw() {
    for (const name of Object.keys(sources)) drawLayer(name);
  }

  for (const [name, source] of Object.entries(sources)) for (const event of source.events) ctx.on(event, () => drawLayer(name));
  ctx.on("change:length", draw); // every mark's position is a share of the length
  draw();
  return { el, draw };
}
