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
  const el = h("div", { class: "ae-header" }, title, status, h("span", { class: "ae-spacer" }), here, position);
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

  ctx.on("change:info", drawInfo);
  ctx.on("change:verification", drawVerification);
  drawInfo();
  drawVerification();
  return { el, banner, machines, drawPosition, drawHere };
}
