// @ts-check
// The header and the notices under it: machine, version, thread and line on view; the verification chip; the
// cursor's position; the divergence banner; where `compare_with` parts from this machine. Drawn as text.

import { formatNumber, h, replace } from "./dom.js";
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
    here.title = bad ? `recorded ${f.hash.recorded}\nreplayed ${f.hash.replayed}` : "";
  }

  /** A followed run: that it is live, when the writer last appended, and a jump to entries past the cursor. */
  function drawLive() {
    const l = model.get("live");
    live.hidden = !(l.following || l.error);
    if (live.hidden) return;
    const last = l.lastRecordedAt ? String(l.lastRecordedAt).replace("T", " ").replace(/\.\d+Z$|Z$/, "") : null;
    replace(
      live,
      l.following
        ? h("span", { class: "ae-chip live", title: l.lastAppendAt ? `last append seen ${l.lastAppendAt}` : "following: no append seen yet" }, "● live")
        : h("span", { class: "ae-chip bad", title: l.error || "" }, "not following"),
      l.following ? h("span", { class: "ae-muted", "data-testid": "live-last" }, last ? ` last append ${last}` : " waiting for the writer") : h("span", { class: "ae-muted" }, ` ${l.error || ""}`),
      l.newEntries ? h("button", { class: "ae-btn ae-btn-small", "data-testid": "live-jump", onclick: () => model.send({ kind: "jump-to-tail" }) }, `${formatNumber(l.newEntries)} new entr${l.newEntries === 1 ? "y" : "ies"} ↓`) : null,
    );
  }

  ctx.on("change:info", drawInfo);
  ctx.on("change:live", drawLive);
  ctx.on("change:verification", drawVerification);
  drawInfo();
  drawVerification();
  drawLive();
  return { el, banner, machines, drawPosition, drawHere };
}
