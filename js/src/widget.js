// @ts-check
// agent_explorer's widget front end (anywidget ESM). Python owns all state: each part here draws the traitlets of
// one panel (js/README.md lists them; js/src/protocol.d.ts, generated from agent_explorer/explorer/protocol.py,
// types them) and sends intents. `render` only lays the parts out and wires them. Data is drawn as text.

import { createContext } from "./context.js";
import { h } from "./dom.js";
import { GraphPanel } from "./graph.js";
import { mountHeader } from "./header.js";
import { mountControls } from "./controls.js";
import { mountTrack } from "./track.js";
import { mountStateTrack } from "./state-track.js";
import { drawComparison } from "./notices.js";
import { StatePanel } from "./state-panel.js";
import { EventTable } from "./table.js";
import { UsagePanel } from "./usage.js";
import { CoverageLayer } from "./coverage.js";
import { RecordingLayer } from "./recording.js";
import { SearchPanel } from "./search.js";
import { createStaticModel, staticSearchResults, staticTableMatches } from "./static.js";
import { LineagePanel } from "./branches.js";
import { ComposerPanel } from "./composer.js";

/**
 * @param {{model: import("./protocol").Model, el: HTMLElement}} props
 * @param {{ kernel?: boolean }} [options] `kernel: false` for the static export: nothing there can compose, so no
 *   composer is drawn (its button could only say "needs a running kernel").
 */
function render({ model, el }, { kernel = true } = {}) {
  const ctx = createContext(model);
  const { on } = ctx;

  const track = mountTrack(ctx);
  const header = mountHeader(ctx);
  const stateTrack = mountStateTrack(ctx);
  const controls = mountControls(ctx, {
    track: track.el,
    onScrub: (i) => {
      header.drawPosition(i);
      lightAhead(i);
    },
  });
  const comparePanel = h("section", { class: "ae-panel ae-compare", "data-testid": "compare", hidden: true });
  const graph = new GraphPanel();
  // A click on a compound state's title collapses it (a collapsed state's box expands it): Python redraws.
  graph.onCollapse = (state, collapsed) => model.send({ kind: "collapse", state, collapsed });
  const table = new EventTable(model, ctx.setIndex);
  const usage = new UsagePanel(model);
  const state = new StatePanel(ctx.setIndex);
  const graphPanel = h("section", { class: "ae-panel ae-chart" }, graph.el);
  const coverage = new CoverageLayer(model, graph); // heatmap toggle in the chart toolbar
  graphPanel.appendChild(coverage.legend);
  const recording = new RecordingLayer(graph); // the recording's states at a divergent index, and the legend
  graphPanel.insertBefore(recording.legend, graphPanel.firstChild);
  const search = new SearchPanel(model, ctx.setIndex);
  const lineage = new LineagePanel(model); // the lines (recording + branches) beside the slider
  const composer = kernel ? new ComposerPanel(model) : null;
  // A message the kernel could not take (explorer/messages.py answers it with an `error` reply): said, not dropped.
  const refused = h("div", { class: "ae-muted ae-bad-text", "data-testid": "message-error", role: "status", hidden: true });

  const root = h(
    "div",
    { class: "ae-root", tabindex: 0, "data-lm-suppress-shortcuts": "true", "aria-label": "Agent run explorer" },
    header.el,
    header.banner,
    refused,
    header.machines,
    controls.el,
    lineage.el,
    h("div", { class: "ae-main" }, graphPanel, state.el),
    composer ? composer.el : null,
    comparePanel,
    h("div", { class: "ae-bottom" }, table.el, usage.el),
    search.el,
  );
  // JupyterLab honours data-lm-suppress-shortcuts (Lumino skips its keymap inside); the class is the
  // older spelling some front ends still check.
  root.classList.add("lm-suppress-shortcuts");
  root.addEventListener("keydown", controls.onKey);
  // Clicking anywhere in the widget (but not into an input) focuses it so the arrows work at once.
  root.addEventListener("pointerdown", (event) => {
    if (!(event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement || event.target instanceof HTMLButtonElement)) root.focus({ preventScroll: true });
  });

  /**
   * Is the chart ahead of `index` on the state track (a slider move still waits for its frame, and the track lit
   * it)? Then an older frame leaves the chart alone, and its panels and table page wait.
   * @param {number | null | undefined} index
   */
  const runsAhead = (index) => {
    const ahead = controls.wanted();
    return ahead !== null && ahead !== index && !!stateTrack.activeAt(ahead);
  };

  /** @type {unknown} */
  let drawnFrame = null; // the frame last drawn: a deferred draw of a frame drawn meanwhile is skipped
  function drawFrame() {
    const f = model.get("frame");
    drawnFrame = f;
    const i = model.get("index");
    // The slider and the position follow change:index / change:length (a frame alone, as a checkout at the
    // same index, leaves both as they are).
    if (!state.draw(f, i, (model.get("graph")).labels || {})) return;
    if (!runsAhead(f.index)) graph.highlightFrame(f.active || [], f.taken || [], f.index);
    recording.draw(f);
    header.drawHere(f);
    usage.draw(f.usage, f.cost, i);
    table.markCurrent(i);
    search.markCurrent(i);
    lineage.placeCursor(i);
  }

  /**
   * A slider move lights its states from the state track at once, in the input's own frame; the kernel's frame
   * then fills in the panels (and the transitions taken). Not tracked: the chart waits for the frame.
   * @param {number} i
   */
  function lightAhead(i) {
    const active = stateTrack.activeAt(i);
    if (active) graph.lightStates(active, i);
  }

  // A frame of an index the slider has already left, while the chart shows a newer one from the state track (a
  // drag, one index in flight): its panels are drawn after the next paint, once however many land in one frame,
  // so drawing them never sits between an input and the paint of its highlight.
  let frameLater = false;
  on("change:frame", () => {
    if (!runsAhead(model.get("frame").index)) {
      drawFrame();
      return;
    }
    if (frameLater) return;
    frameLater = true;
    requestAnimationFrame(() => setTimeout(() => {
      frameLater = false;
      if (!disposed && model.get("frame") !== drawnFrame) drawFrame();
    }, 0));
  });
  on("change:index", () => header.drawPosition(model.get("index")));
  on("change:length", () => header.drawPosition(model.get("index")));
  on("change:comparison", () => drawComparison(comparePanel, model.get("comparison"), model.get("length") || 0, ctx.setIndex));
  // A jump sends the frame and then the table's new page. The page (up to 100 rows rebuilt) is drawn after the
  // next paint, so the highlight shows first; several pages in one frame are drawn once (issue 23, frames on
  // time: drawing the page first held a drag's highlight back by the table's redraw).
  let tableLater = false;
  let disposed = false;
  // While a drag runs ahead on the state track, a page of an index the thumb has left waits until the slider
  // settles (its last frame is in): rebuilding 100 rows per landed frame held the drag's inputs back.
  const drawTableLater = () => requestAnimationFrame(() => setTimeout(() => { // rAF runs before the paint, the timeout after it
    if (disposed) return;
    if (runsAhead(null)) {
      drawTableLater();
      return;
    }
    tableLater = false;
    table.draw(model.get("table"), model.get("index"));
  }, 0));
  on("change:table", () => {
    if (tableLater) return;
    tableLater = true;
    drawTableLater();
  });
  ctx.cleanup(() => {
    disposed = true;
  });
  on("change:table_types", () => table.drawTypes(model.get("table_types")));
  on("change:usage_series", () => usage.drawSeries(model.get("usage_series"), model.get("length")));
  on("change:graph", () => graph.draw(model.get("graph")).then(() => coverage.draw()));
  on("change:coverage_data", () => coverage.draw());
  on("change:search_results", () => search.draw(model.get("search_results"), model.get("index")));
  on("change:usage_ledger", () => usage.drawLedger(model.get("usage_ledger")));
  on("change:lineage", () => lineage.draw(model.get("lineage"), model.get("index")));
  if (composer) on("change:composer", () => composer.draw(model.get("composer")));
  on("msg:custom", (/** @type {import("./protocol").Reply} */ reply) => {
    if (reply?.kind !== "error") return;
    refused.hidden = false;
    refused.textContent = `The kernel refused a ${reply.about ?? "widget"} message: ${reply.message}`;
  });

  el.classList.add("ae-host");
  el.appendChild(root);
  table.drawTypes(model.get("table_types"));
  table.draw(model.get("table"), model.get("index"));
  usage.drawSeries(model.get("usage_series"), model.get("length"));
  usage.drawLedger(model.get("usage_ledger"));
  search.draw(model.get("search_results"), model.get("index"));
  lineage.draw(model.get("lineage"), model.get("index"));
  drawComparison(comparePanel, model.get("comparison"), model.get("length") || 0, ctx.setIndex);
  header.drawPosition(model.get("index"));
  drawFrame();
  // The chart re-applies the last highlight and the recording layer to each drawing itself.
  graph.draw(model.get("graph")).then(() => {
    coverage.draw();
    root.dataset.ready = "true";
  });

  return () => {
    graph.disconnect();
    table.disconnect();
    ctx.dispose();
    root.removeEventListener("keydown", controls.onKey);
  };
}

/**
 * The static export's entry (`Explorer.to_html`): the same view over the exported data, no kernel.
 * @param {import("./static.js").StaticData} data @param {HTMLElement} el
 */
export function renderStatic(data, el) {
  return render({ model: createStaticModel(data), el }, { kernel: false });
}

/** The static page's search and table filter over exported data (the page itself uses them; tests compare them
 * with Python's `search_log` and `EventTable.matches`). */
export { staticSearchResults, staticTableMatches };

export default { render };
