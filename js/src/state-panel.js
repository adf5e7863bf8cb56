// @ts-check
// The state panel: the frame Python built for the cursor, drawn as text (value, event, context tree with
// changed paths, children in flight with their request ids, timers armed, owed effects, output, hash), or the
// fold's progress while the frame is pending.

import { formatNumber, formatRecorded, h, plural, replace, shortHashPair } from "./dom.js";
import { jsonTree } from "./json-tree.js";

/** @param {string} label @param {...import("./dom.js").Child} content */
function section(label, ...content) {
  return h("div", { class: "ae-section" }, h("div", { class: "ae-section-label" }, label), ...content);
}

/** "in flight" (children with their request ids) and "timers armed" (after delays), or the plain children list
 * of a frame built without the pending index. `jump(i)` moves the cursor to where a request or timer began.
 * @param {import("./protocol").Traits["frame"]} f @param {number} i @param {(i: number) => void} jump */
function pendingSections(f, i, jump) {
  const out = [];
  /** @param {number | null | undefined} k  the index a request or timer began at */
  const at = (k) => (k === null || k === undefined ? null : k === i ? h("span", { class: "ae-muted" }, " · since here") : h("button", { class: "ae-link", title: `go to index ${k}`, onclick: () => jump(k) }, `since #${k}`));
  if (Array.isArray(f.inflight)) {
    if (f.inflight.length) {
      out.push(section("in flight", h("ul", { class: "ae-list", "data-testid": "inflight" }, f.inflight.map((c) => h("li", {}, c.kind ? h("span", { class: "ae-chip" }, c.kind) : null, " ", h("code", {}, c.requestId ?? c.id), c.src && c.src !== c.id ? h("span", { class: "ae-muted" }, ` ← ${c.src}`) : null, " ", at(c.requestedAt))))));
    }
  } else if ((f.children || []).length) {
    out.push(section("children", h("ul", { class: "ae-list" }, f.children?.map((c) => h("li", {}, h("code", {}, c.id), c.src ? h("span", { class: "ae-muted" }, ` ← ${typeof c.src === "string" ? c.src : JSON.stringify(c.src)}`) : null, c.status ? h("span", { class: "ae-muted" }, ` (${c.status})`) : null)))));
  }
  if ((f.timers || []).length) {
    out.push(section("timers armed", h("ul", { class: "ae-list", "data-testid": "timers" }, f.timers?.map((t) => h("li", {}, h("span", { class: "ae-chip pending" }, formatDelay(t.delay)), " ", h("code", { title: t.event || "" }, t.stateId ? `after → ${t.stateId}` : t.event ?? t.id), " ", at(t.armedAt))))));
  }
  return out;
}

/** A delay as a person reads it, by the rules of pending.py's `duration_text` (the owed effect's "fires after …"
 * comes from there): the largest unit it reaches, three significant digits: `250 ms`, `1.5 s`, `4 min`, `4 h`.
 * @param {number | null | undefined} ms */
function formatDelay(ms) {
  if (typeof ms !== "number") return "delay";
  /** @type {Array<[string, number]>} */
  const units = [["d", 86400000], ["h", 3600000], ["min", 60000], ["s", 1000]];
  for (const [unit, size] of units) if (ms >= size) return `${significant(ms / size, 3)} ${unit}`;
  return `${significant(ms, 6)} ms`;
}

/** Python's `format(x, ".<digits>g")`. @param {number} x @param {number} digits */
function significant(x, digits) {
  if (x === 0) return "0";
  const [mantissa, exp] = x.toExponential(digits - 1).split("e");
  const e = Number(exp);
  if (e < -4 || e >= digits) {
    const m = mantissa.includes(".") ? mantissa.replace(/\.?0+$/, "") : mantissa;
    return `${m}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  }
  const fixed = x.toFixed(Math.max(0, digits - 1 - e));
  return fixed.includes(".") ? fixed.replace(/\.?0+$/, "") : fixed;
}

/**
 * At a divergent index: what the recording did beside what the replay does, each side labelled (the chart draws
 * the same two highlights, with a legend).
 * @param {import("./protocol").Traits["frame"]} f @param {HTMLElement} hashChip
 */
function bothSides(f, hashChip) {
  const r = f.recording;
  if (!r) return null; // drawn only at an index with the recording's side (the caller checks)
  const recorded = r.source === "recorder" ? r.valueText ?? "" : r.active.length ? r.active[r.active.length - 1].split(".").pop() : "unknown";
  return h(
    "div",
    { class: "ae-section ae-sides", "data-testid": "both-sides" },
    h("div", { class: "ae-section-label" }, "value: the recording and the replay part here ", hashChip),
    h("div", { class: "ae-side recording", "data-testid": "side-recording" }, h("span", { class: "ae-side-label" }, "recording"), h("span", { class: "ae-value-recorded", "data-testid": "recorded-value" }, recorded), r.candidates ? h("span", { class: "ae-muted" }, " (or another state handling that event)") : null),
    h("div", { class: "ae-side replay", "data-testid": "side-replay" }, h("span", { class: "ae-side-label" }, "replay"), h("span", { class: "ae-value", "data-testid": "state-value" }, f.valueText ?? ""), f.status ? h("span", { class: `ae-chip status-${f.status}` }, f.status) : null),
    h("div", { class: "ae-muted ae-side-why", "data-testid": "side-why" }, r.source === "recorder" ? `Recording: ${r.reason}.` : `Recording (inferred): ${r.reason}.`),
  );
}

export class StatePanel {
  /** @param {(i: number) => void} setIndex moves the cursor (context.js) */
  constructor(setIndex) {
    this.jump = setIndex;
    this.folded = new Map(); // context tree paths the user opened or closed, kept while scrubbing
    this.payloadOpen = false; // the event payload's disclosure, kept open or closed across steps
    this.body = h("div", { class: "ae-state-body" });
    this.el = h("section", { class: "ae-panel ae-state", "data-testid": "state" }, h("div", { class: "ae-panel-head" }, h("span", { class: "ae-panel-title" }, "State")), this.body);
  }

  /** Draw frame `f` (at cursor `i`); `labels` maps transition ids to their chart labels. */
  /** @param {import("./protocol").Traits["frame"]} f @param {number} i @param {Record<string, string>} labels */
  draw(f, i, labels) {
    const folded = this.folded;
    const stateBody = this.body;
    if (f.index === undefined) {
      replace(stateBody, h("div", { class: "ae-muted" }, "nothing to show yet"));
      return false;
    }
    if (f.pending) {
      // Python answers this index once its background fold gets there; show how far it is.
      const pct = Math.floor((100 * (f.built || 0)) / Math.max(1, f.length || 1));
      replace(
        stateBody,
        h("div", { class: "ae-pending", "data-testid": "pending" }, `Replaying up to index ${formatNumber(f.index)}… `, h("span", { class: "ae-muted" }, `${formatNumber(f.built || 0)} of ${plural(f.length || 0, "entry", "entries")} folded (${pct}%)`)),
        section("event", h("code", { class: "ae-type" }, f.entry?.type ?? "")),
      );
      return false;
    }
    const entry = f.entry || /** @type {Partial<import("./protocol").EntryView>} */ ({});
    const hash = f.hash || /** @type {Partial<import("./protocol").HashCheck>} */ ({});
    const hashChip = hash.ok === false ? h("span", { class: "ae-chip bad", "data-testid": "hash-status" }, "hash mismatch") : hash.ok ? h("span", { class: "ae-chip ok", "data-testid": "hash-status" }, "hash ok") : h("span", { class: "ae-chip", "data-testid": "hash-status" }, "no hash");
    const blocks = [];
    // `error`: the frame could not be built; `machineError`: the machine's own error once its status is "error";
    // `foldError`: folding this entry raised, so the state shown is the one before it.
    if (f.error) blocks.push(h("div", { class: "ae-error-text", "data-testid": "state-error" }, String(f.error)));
    if (f.machineError !== undefined) {
      const e = f.machineError;
      const text = e && typeof e === "object" ? `${e.name ?? "Error"}: ${e.message ?? JSON.stringify(e)}` : String(e);
      blocks.push(h("div", { class: "ae-error-text", "data-testid": "state-error" }, `machine error: ${text}`));
    }
    if (f.foldError) blocks.push(h("div", { class: "ae-error-text", "data-testid": "fold-error" }, f.foldError));
    blocks.push(
      // Pinned while the rest scrolls: the value (both sides at a divergence) and the event stay in view.
      h(
        "div",
        { class: "ae-state-head", "data-testid": "state-head" },
        f.recording ? bothSides(f, hashChip) : section("value", h("div", { class: "ae-value", "data-testid": "state-value" }, f.valueText ?? ""), h("div", { class: "ae-chips" }, f.status ? h("span", { class: `ae-chip status-${f.status}` }, f.status) : null, (f.tags || []).map((t) => h("span", { class: "ae-chip tag" }, t)))),
        section("event", h("div", { class: "ae-event-line" }, h("code", { class: "ae-type", "data-testid": "event-type" }, entry.type ?? ""), h("span", { class: "ae-muted", title: entry.recordedAt || "" }, ` #${entry.index ?? i} · ${formatRecorded(entry.recordedAt, { year: true })}`))),
      ),
      h(
        "div",
        { class: "ae-section ae-event-more" },
        (f.taken || []).length ? h("div", { class: "ae-taken" }, "took ", (f.taken || []).map((t) => h("code", { title: t }, labels[t] || t)).flatMap((c, k) => (k ? [", ", c] : [c]))) : h("div", { class: "ae-muted ae-taken" }, i === 0 ? "initial state" : entry.type === "@agent.usage" ? "usage record: journaled, not sent to the machine" : f.status === "error" && String(entry.type).startsWith("xstate.error.actor.") ? "no onError handles it: the machine stopped with status error" : "ignored: no enabled transition in this state"),
        h("details", { class: "ae-event-json", open: this.payloadOpen, ontoggle: (/** @type {Event} */ event) => (this.payloadOpen = /** @type {HTMLDetailsElement} */ (event.target).open) }, h("summary", {}, "payload"), h("pre", { "data-testid": "event-json" }, entry.eventText ?? "", entry.eventTruncated ? "\n… (truncated)" : "")),
      ),
    );
    blocks.push(...pendingSections(f, i, this.jump));
    if (f.effects?.length) {
      // What a host resuming here would still have to do (the step path's replay): model calls, tasks, timers.
      blocks.push(section("still owed", h("ul", { class: "ae-list", "data-testid": "effects", title: "What a host resuming after this entry owes (steps.replay)" }, f.effects.map((e) => h("li", {}, h("span", { class: "ae-chip" }, e.kind ?? "?"), " ", h("code", { title: e.requestId || "" }, e.requestId ?? e.site ?? ""), e.detail ? h("span", { class: "ae-muted" }, ` · ${e.detail}`) : null)))));
    }
    blocks.push(section("context", f.context === null && f.contextNote ? h("div", { class: "ae-muted" }, f.contextNote) : jsonTree(f.context, { rootPath: ["context"], changed: f.changed || [], remembered: folded })));
    if (f.output !== undefined) blocks.push(section("output", jsonTree(f.output, { rootPath: ["output"] })));
    const shownHash = shortHashPair(hash.recorded, hash.replayed);
    blocks.push(section("hash", h("div", { class: "ae-hash" }, hashChip, " recorded ", h("code", { title: hash.recorded || "" }, shownHash[0]), " · replayed ", h("code", { title: hash.replayed || "" }, shownHash[1]))));
    replace(stateBody, blocks);
    return true;
  }
}
