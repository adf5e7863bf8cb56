// @ts-check
// The notices above and below the chart: verification chip, divergence banner, machine comparison,
// branch comparison (lanes, the events each line has where they part, the state diff). Each draws one
// traitlet's payload into its element, as text.

import { formatNumber, h, plural, replace, shortHashPair } from "./dom.js";

/** The chip in the header: verified / n divergent / verifying… (with progress) / failed / not verified. */
/** @param {HTMLElement} status @param {import("./protocol").Traits["verification"]} v */
export function drawStatusChip(status, v) {
  status.className = "ae-chip";
  status.title = "";
  if (v.status === "ok") {
    status.classList.add("ok");
    status.textContent = "verified";
    status.title = "Every recorded state hash matches the replay";
  } else if (v.status === "diverged") {
    status.classList.add("bad");
    status.textContent = `${formatNumber(v.count)} divergent`;
    status.title = "Replay derived different states than the log recorded";
  } else if (v.status === "pending") {
    status.classList.add("pending");
    status.textContent = typeof v.progress === "number" ? `verifying… ${Math.floor(v.progress * 100)}%` : "verifying…";
  } else if (v.status === "error") {
    status.classList.add("bad");
    status.textContent = "verification failed";
    status.title = v.message || "";
  } else {
    status.textContent = "not verified";
  }
}

/** The red banner: first divergent index, its event, recorded vs replayed hash, how many more, a jump. */
/** @param {HTMLElement} banner @param {import("./protocol").Traits["verification"]} v @param {(i: number) => void} setIndex */
export function drawBanner(banner, v, setIndex) {
  banner.hidden = v.status !== "diverged";
  if (v.status !== "diverged") return;
  const d = v.detail || /** @type {Partial<import("./protocol").DivergenceDetail>} */ ({});
  const eventType = d.event && typeof d.event === "object" ? d.event.type : null;
  const more = Math.max(0, (v.count || 0) - 1);
  const shown = shortHashPair(d.expectedHash, d.actualHash);
  const jump = h("button", { class: "ae-btn ae-btn-danger", "data-testid": "jump-divergence", onclick: () => setIndex(v.first ?? 0) }, `Jump to ${v.first}`);
  const parts = [
    h("strong", {}, `Replay diverges at index ${v.first}`),
    eventType ? [" on ", h("code", {}, eventType)] : null,
    d.kind && d.kind !== "state" ? ` (${d.kind})` : null,
    h("div", { class: "ae-banner-hashes" }, "recorded ", h("code", { title: d.expectedHash || "" }, shown[0]), " ≠ replayed ", h("code", { title: d.actualHash || "" }, shown[1]), more ? ` · ${formatNumber(more)} further divergent entr${more === 1 ? "y" : "ies"}` : " · no further divergences"),
  ];
  replace(banner, h("div", { class: "ae-banner-text" }, parts), jump);
}

/** `compare_with`: where the other machine parts from this log, with the state diff there. */
/** `compare_with`: where the replay parts from the recording machine, both sides named, the diff as
 * recording → replay (the direction of `compare_machines(recorder, today, entries)` in a notebook).
 * @param {HTMLElement} panel @param {import("./protocol").MachinesComparison | null | undefined} machines
 * @param {import("./protocol").Traits["info"]} info @param {(i: number) => void} setIndex */
export function drawMachines(panel, machines, info, setIndex) {
  panel.hidden = !machines;
  if (!machines) return;
  const recording = machines.before || `recording (compare_with${info.compareWith ? ` v${String(info.compareWith).slice(0, 12)}` : ""})`;
  const replay = machines.after || "replay (this machine)";
  if (machines.error) {
    replace(panel, h("div", { class: "ae-error-text" }, `Could not compare the ${recording} with the ${replay}: ${machines.error}`));
  } else if (machines.index === null || machines.index === undefined) {
    replace(panel, h("div", {}, `The ${recording} and the ${replay} fold this log to the same states at every index.`));
  } else {
    const took = (/** @type {string[] | undefined} */ ids) => (ids?.length ? ids.join(", ") : "no transition");
    replace(
      panel,
      h("div", {}, h("strong", {}, "Recording vs replay: "), `the ${recording} and the ${replay} part ways at index ${machines.index}. `, h("button", { class: "ae-btn ae-btn-small", "data-testid": "jump-machines", onclick: () => setIndex(machines.index ?? 0) }, `Jump to ${machines.index}`)),
      machines.transitionsBefore ? h("div", { class: "ae-muted", "data-testid": "machines-took" }, `there the recording took ${took(machines.transitionsBefore)}; the replay took ${took(machines.transitionsAfter)}`) : null,
      diffList(machines.diff, ["recording", "replay"]),
    );
  }
}

/** @param {string} text */
function cap(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A state diff, one change per row: path, the first side's value → the second's (`sides` labels them). */
/** @param {import("./protocol").BranchComparisonView["diff"] | undefined} diff @param {string[] | null} [sides] */
function diffList(diff, sides = null) {
  return h(
    "ul",
    { class: "ae-diff", "data-testid": "diff" },
    sides ? h("li", { class: "ae-diff-head ae-muted" }, "path: ", h("span", { class: "ae-before" }, sides[0]), " → ", h("span", { class: "ae-after" }, sides[1])) : null,
    (diff || []).slice(0, 30).map((c) => h("li", {}, h("code", {}, Array.isArray(c.path) ? c.path.join(".") : String(c.path)), " ", h("span", { class: "ae-before" }, JSON.stringify(c.before) ?? "—"), " → ", h("span", { class: "ae-after" }, JSON.stringify(c.after) ?? "—"))),
  );
}

/** `explorer.compare(branch)`: both timelines as lanes, the fork and the first difference marked. */
/** @param {HTMLElement} panel @param {import("./protocol").Traits["comparison"]} c @param {number} length @param {(i: number) => void} setIndex */
export function drawComparison(panel, c, length, setIndex) {
  panel.hidden = !Object.keys(c).length;
  if (panel.hidden) return;
  const head = h("div", { class: "ae-panel-head" }, h("span", { class: "ae-panel-title" }, "Branch comparison"));
  // Names of the two lines (the one on view, the one compared) when Python sent them; else the generic words.
  const nameA = c.lineName || "this run";
  const nameB = (c.branch?.name) || "the branch";
  const summary =
    c.index === null || c.index === undefined
      ? h("div", {}, `${cap(nameB)} (${plural(c.lengthB, "entry", "entries")}, forked at ${c.forkedAt}) and ${nameA} (${plural(c.lengthA, "entry", "entries")}) reach the same states.`)
      : h("div", {}, `${cap(nameA)} (${plural(c.lengthA, "entry", "entries")}) and ${nameB} (${plural(c.lengthB, "entry", "entries")}, forked at ${c.forkedAt}) first differ at index ${c.index}: ${c.reason}. `, c.index < length ? h("button", { class: "ae-btn ae-btn-small", onclick: () => setIndex(c.index ?? 0) }, `Jump to ${c.index}`) : null);
  const span = Math.max(1, c.lengthA || 0, c.lengthB || 0);
  /** @param {number} i */
  const pct = (i) => `${(Math.max(0, i) / span) * 100}%`;
  /** @param {string} label @param {number} count @param {string} testid */
  const lane = (label, count, testid) =>
    h(
      "div",
      { class: "ae-lane", "data-testid": testid },
      h("span", { class: "ae-lane-label" }, label),
      h(
        "div",
        { class: "ae-lane-track" },
        h("span", { class: "ae-lane-bar", style: `width:${pct(count)}` }),
        c.forkedAt !== null && c.forkedAt !== undefined ? h("span", { class: "ae-lane-mark fork", style: `left:${pct(c.forkedAt)}`, title: `fork: entries before ${c.forkedAt} are shared` }) : null,
        c.index !== null && c.index !== undefined ? h("span", { class: "ae-lane-mark diff", style: `left:${pct(c.index)}`, title: `first difference: ${c.index}` }) : null,
      ),
      h("span", { class: "ae-muted ae-lane-len" }, plural(count, "entry", "entries")),
    );
  const lanes = h("div", { class: "ae-lanes" }, lane(nameA, c.lengthA || 0, "lane-run"), lane(nameB === "the branch" ? "branch" : nameB, c.lengthB || 0, "lane-branch"));
  const appended = (c.branch?.appended || []).map((r) => h("span", { class: `ae-chip ${r.ignored ? "pending" : ""}`, title: r.ignored ? "ignored in that state" : "" }, `${r.index}: ${r.type}${r.ignored ? " (ignored)" : ""}`));
  /** @param {{type?: string} | null | undefined} e  the event a line has there, none when it has ended */
  const eventText = (e) => (e ? h("code", { title: JSON.stringify(e) }, e.type ?? "?") : h("span", { class: "ae-muted" }, "(ended)"));
  const events =
    c.index !== null && c.index !== undefined && (c.eventA || c.eventB)
      ? h("div", { class: "ae-compare-events", "data-testid": "compare-events" }, `at index ${c.index}: ${nameA} has `, eventText(c.eventA), `, ${nameB} has `, eventText(c.eventB))
      : null;
  replace(panel, head, summary, lanes, events, appended.length ? h("div", { class: "ae-chips" }, "branch appended: ", appended) : null, (c.diff || []).length ? diffList(c.diff) : null);
}
