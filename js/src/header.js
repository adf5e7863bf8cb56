// @ts-check
// The header and the notices under it: machine, version, thread and line on view; the verification chip; the
// cursor's position; the divergence banner; where `compare_with` parts from this machine. Drawn as text.

import { formatNumber, h, plural, replace } from "./dom.js";
import { drawBanner, drawMachines, drawStatusChip } from "./notices.js";

/**
 * @param {import("./context.js").Context} ctx
 */
export function mountHeader(ctx) {
  const { model } = ctx;
  const title = h("span", { class: "ae-title" });
  const status = h("span", { class: "ae-chip", "data-testid": "verify-status" });
  const position = h("span", { class: "ae-position", "data-testid": "position" });
  const here = h("span", { class: "ae-chip bad ae-here", "data-testid": "here-mismatch", hidden: true });
  const live = h("span", { class: "ae-live", "data-testid": "live", hidden: true });
  const el = h("div", { class: "ae-header" }, title, status, live, h("span", { class: "ae-spacer" }), here, position);
  const banner = h("div", { class: "ae-banner", role: "alert", "data-testid": "divergence", hidden: true });
  const machines = h("div", { class: "ae-machines", "data-testid": "machines", hidden: true });

  function drawInfo() {
    const info = model.get("info");
    replace(
      title,
      info.machineId || "machine",
      h("span", { class: "ae-muted" }, info.machineVersion ? ` v${String(info.machineVersion).slice(0, 12)}` : ""),
      info.threadId ? h("span", { class: "ae-muted" }, ` · ${info.threadId}`) : null,
      info.line && info.line !== "recording" ? h("span", { class: "ae-chip ae-line", "data-testid": "line-name", title: "the line on view" }, info.line) : null,
    );
  }

  /** @param {number} i */
  function drawPosition(i) {
    position.textContent = `index ${formatNumber(i)} / ${formatNumber(ctx.last())}`;
    position.title = `entry ${formatNumber(i)} of indices 0–${formatNumber(ctx.last())} (${plural(ctx.last() + 1, "entry", "entries")})`;
  }

  function drawVerification() {
    const v = model.get("verification");
    drawStatusChip(status, v);
    drawBanner(banner, v, ctx.setIndex);
    drawMachines(machines, v.machines, model.get("info"), ctx.setIndex);
  }

  /** At every divergent index, above the fold: this entry's recorded hash is not the replay's.
   * @param {import("./protocol").Traits["frame"]} f */
  function drawHere(f) {
    const bad = !!(f.hash && f.hash.ok === false);
    here.hidden = !bad;
    here.textContent = bad ? "recorded ≠ replayed here" : "";
    here.title = bad && f.hash ? `recorded ${f.hash.recorded}\nreplayed ${f.hash.replayed}` : "";
  }

  /** A followed run: that it is live, when the writer last appended (clock time and how long ago, kept
   * current by a one-second tick), and, when the cursor is away from the tail, a jump to the newest entry. */
  const lastSeen = h("span", { class: "ae-muted", "data-testid": "live-last" });
  /** @type {ReturnType<typeof setInterval> | null} */
  let ticking = null;
  ctx.cleanup(() => {
    if (ticking) clearInterval(ticking);
  });

  function drawLastSeen() {
    const l = model.get("live");
    if (!l.lastAppendAt) {
      lastSeen.textContent = "watching for new entries";
      lastSeen.title = "nothing appended since the explorer started following";
      return;
    }
    const at = new Date(l.lastAppendAt);
    const today = at.toDateString() === new Date().toDateString();
    const clock = today ? at.toLocaleTimeString([], { hour12: false }) : at.toLocaleString([], { hour12: false });
    lastSeen.textContent = `last append ${clock} (${ago(Date.now() - at.getTime())})`;
    lastSeen.title = `the newest entry arrived ${at.toISOString()}${l.lastRecordedAt ? `; its recordedAt is ${l.lastRecordedAt}` : ""}`;
  }

  function drawLive() {
    const l = model.get("live");
    live.hidden = !(l.following || l.error);
    if (ticking && !l.following) {
      clearInterval(ticking);
      ticking = null;
    }
    if (live.hidden) return;
    if (!l.following) {
      replace(live, h("span", { class: "ae-chip bad", title: "following stopped; ex.follow() starts again and catches up" }, "not following"), h("span", { class: "ae-muted" }, l.error || ""));
      return;
    }
    const thread = model.get("info").threadId;
    drawLastSeen();
    if (!ticking) ticking = setInterval(drawLastSeen, 1000);
    const n = l.newEntries;
    replace(
      live,
      h("span", { class: "ae-chip live", title: `following ${thread ? `thread ${thread}` : "the thread"}: entries appear as its host appends them (ex.follow(False) stops)` }, "● live"),
      lastSeen,
      n
        ? h("button", {
            class: "ae-btn ae-btn-small ae-live-jump",
            "data-testid": "live-jump",
            title: `${formatNumber(n)} entr${n === 1 ? "y" : "ies"} arrived after the cursor, which stays where you put it; jump to the newest (End)`,
            onclick: () => model.send({ kind: "jump-to-tail" }),
          }, `${formatNumber(n)} new entr${n === 1 ? "y" : "ies"} → go to latest`)
        : null,
    );
  }

  /** Flow control while following: say when a refresh of the views (its `seq`, the last of its messages) has
   * been drawn, so the kernel sends the next one only then (batches that arrive meanwhile merge into it). */
  let acked = 0;
  function ackDrawn() {
    const seq = model.get("live").seq || 0;
    if (seq <= acked) return;
    acked = seq;
    setTimeout(() => model.send({ kind: "live-drawn", seq }), 0); // after this task: every handler has drawn
  }

  ctx.on("change:info", drawInfo);
  ctx.on("change:live", drawLive);
  ctx.on("change:live", ackDrawn);
  ctx.on("change:verification", drawVerification);
  drawInfo();
  drawVerification();
  drawLive();
  return { el, banner, machines, drawPosition, drawHere };
}

/** "just now", "12 s ago", "3 min ago", "2 h ago" (a kernel clock a little ahead of the browser's is "just now"). @param {number} ms */
function ago(ms) {
  const seconds = Math.round(ms / 1000);
  if (seconds < 2) return "just now";
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  return `${Math.floor(seconds / 3600)} h ago`;
}
