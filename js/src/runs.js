// @ts-check
// The run list (`Runs`, agent_explorer/explorer/runs.py): draws the page of rows Python sent (`page`), the counts per
// status (`counts`), the folding / following progress (`progress`) and which thread is open (`selection`); sends
// intents (`runs-page`, `runs-sort`, `runs-filter`, `runs-select`). It never holds more than one page. Every value
// from the store is drawn as text (dom.js). Keyboard: ↑/↓ move between rows, Enter opens the row, PageUp/PageDown
// turn pages.

import { debounce, formatNumber, formatRecorded, h, plural, replace } from "./dom.js";

/** @typedef {import("./protocol").RunsModel} RunsModel */
/** @typedef {import("./protocol").RunRow} RunRow */

const STATUSES = ["done", "error", "idle", "in-flight", "skipped", "unreadable"];
/** @type {Record<string, string>} */
const STATUS_TITLES = {
  done: "the machine reached its final state",
  error: "the snapshot's status is error",
  idle: "waiting for an event from outside (timers may be armed)",
  "in-flight": "a request started with no recorded completion: running now, or cut off by a crash",
  skipped: "recorded by another machine id",
  unreadable: "could not be read or folded",
};

/** @type {Array<[string, string, string, boolean]>} [label, summary column it sorts by, tooltip, numeric] */
const COLUMNS = [
  ["thread", "thread_id", "the thread id", false],
  ["entries", "entries", "entries in the log", true],
  ["last recorded", "last_recorded", "when the last entry was recorded (UTC)", false],
  ["state", "state", "the last state, as one line (regions joined by |)", false],
  ["status", "status", "how the run stands: done, error, idle, in-flight, skipped, unreadable", false],
  ["verified", "verified", "✓ every hashed entry replays to its recorded hash; ✗ diverges (at the index shown)", false],
  ["tokens", "total_tokens", "total tokens of the run's usage records", true],
  ["cost", "cost_usd", "cost in USD at the prices given (— without prices)", true],
];

/** @param {boolean | null} verified @param {number | null} at */
function verifiedCell(verified, at) {
  if (verified === true) return h("span", { class: "ae-ok-text", title: "every hashed entry verified" }, "✓");
  if (verified === false) {
    const where = typeof at === "number" ? ` at ${at}` : "";
    return h("span", { class: "ae-bad-text", title: `diverges${where}` }, `✗${where}`);
  }
  return h("span", { class: "ae-muted", title: "no entry carried a hash, or the thread was not folded" }, "—");
}

/** @param {number | null} cost */
function costText(cost) {
  if (typeof cost !== "number") return "—";
  return cost < 0.01 ? `$${cost.toFixed(4)}` : `$${cost.toFixed(2)}`;
}

/** @param {{model: RunsModel, el: HTMLElement}} props */
function render({ model, el }) {
  /** @typedef {Parameters<RunsModel["on"]>[1]} Listener  as the protocol's RunsModel takes it */
  /** @type {Array<[string, Listener]>} */
  const listeners = [];
  /** @param {string} event @param {Listener} fn */
  const on = (event, fn) => {
    model.on(event, fn);
    listeners.push([event, fn]);
  };

  // -- controls: status chips (toggle), state, thread id text, verified --
  /** @type {Set<string>} */
  const wanted = new Set();
  const chips = STATUSES.map((status) =>
    h("button", {
      class: `ae-btn ae-btn-small ae-runs-status ae-status-${status}`,
      "data-status": status,
      title: STATUS_TITLES[status],
      "aria-pressed": "false",
      onclick: () => {
        if (wanted.has(status)) wanted.delete(status);
        else wanted.add(status);
        sendFilter();
      },
    }),
  );
  const allChip = h("button", { class: "ae-btn ae-btn-small ae-runs-all", title: "show every status", onclick: () => {
    wanted.clear();
    sendFilter();
  } });
  const stateInput = h("input", {
    class: "ae-input ae-runs-state", type: "search", placeholder: "state (e.g. awaitingApproval)",
    "aria-label": "Show runs whose last state is, or is inside, this state",
  });
  const textInput = h("input", {
    class: "ae-input ae-runs-text", type: "search", placeholder: "thread id contains…", "aria-label": "Filter by thread id",
  });
  const verifiedSelect = h("select", { class: "ae-input ae-runs-verified", "aria-label": "Filter by verification" },
    h("option", { value: "" }, "verified: any"),
    h("option", { value: "true" }, "verified ✓"),
    h("option", { value: "false" }, "diverges ✗"),
  );
  const typedLater = debounce(() => sendFilter(), 250);
  stateInput.addEventListener("input", typedLater);
  textInput.addEventListener("input", typedLater);
  verifiedSelect.addEventListener("change", () => sendFilter());

  // The filter last drawn and the one this page last sent, as keys: a filter that arrives and is neither was set
  // from Python (a cell), and a send still pending from earlier typing would undo it with stale values.
  let drawnFilter = "";
  let sentFilter = "";
  /** @param {{status: string[], state: string, text: string, verified: boolean | null}} f */
  const filterKey = (f) => JSON.stringify([[...f.status].sort(), f.state, f.text, f.verified]);

  function sendFilter() {
    typedLater.cancel();
    const v = /** @type {HTMLSelectElement} */ (verifiedSelect).value;
    const filter = {
      status: [...wanted],
      state: /** @type {HTMLInputElement} */ (stateInput).value,
      text: /** @type {HTMLInputElement} */ (textInput).value,
      verified: v === "" ? null : v === "true",
    };
    sentFilter = filterKey(filter);
    model.send({ kind: "runs-filter", ...filter });
  }

  // -- the table --
  const headRow = h("tr");
  const body = h("tbody");
  const table = h("table", { class: "ae-table ae-runs-table", role: "grid" }, h("thead", {}, headRow), body);
  const pageLabel = h("span", { class: "ae-muted ae-page-label", "data-testid": "runs-page-label" });
  const prev = h("button", { class: "ae-btn ae-btn-small", title: "Previous page (PageUp)", onclick: () => step(-1) }, "‹");
  const next = h("button", { class: "ae-btn ae-btn-small", title: "Next page (PageDown)", onclick: () => step(1) }, "›");
  const progressText = h("span", { class: "ae-muted ae-runs-progress", "data-testid": "runs-progress" });
  const bar = h("div", { class: "ae-runs-bar" }, h("div", { class: "ae-runs-bar-fill" }));
  const notice = h("div", { class: "ae-runs-notice", role: "status", hidden: true });
  const empty = h("div", { class: "ae-muted ae-runs-empty", hidden: true });

  const root = h(
    "div",
    { class: "ae-root ae-runs", "data-lm-suppress-shortcuts": "true", "aria-label": "Runs of a store" },
    h("div", { class: "ae-runs-head" },
      h("span", { class: "ae-panel-title" }, "Runs"),
      h("span", { class: "ae-runs-counts" }, allChip, ...chips),
      h("span", { class: "ae-spacer" }),
      progressText,
    ),
    bar,
    h("div", { class: "ae-runs-filters" }, stateInput, textInput, verifiedSelect, h("span", { class: "ae-spacer" }), pageLabel, prev, next),
    notice,
    h("section", { class: "ae-panel ae-runs-list", "data-testid": "runs" }, h("div", { class: "ae-runs-scroll" }, table), empty),
  );
  el.appendChild(root);

  /** @type {number} the focused row on this page (keyboard), -1: none */
  let focused = -1;

  /** @param {number} direction */
  function step(direction) {
    const page = model.get("page");
    const limit = page.limit || 50;
    const offset = (page.offset || 0) + direction * limit;
    if (offset < 0 || offset >= (page.total || 0)) return;
    focused = direction > 0 ? 0 : limit - 1;
    model.send({ kind: "runs-page", offset });
  }

  function drawHead() {
    const page = model.get("page");
    const sort = page.sort || { column: "last_recorded", descending: true };
    replace(headRow, ...COLUMNS.map(([label, column, title, numeric]) => {
      const active = sort.column === column;
      const arrow = active ? (sort.descending ? " ▼" : " ▲") : "";
      return h("th", {
        class: `ae-runs-sortable${numeric ? " ae-num" : ""}${active ? " ae-sorted" : ""}`,
        title: `${title}. Click to sort`,
        "data-column": column,
        "aria-sort": active ? (sort.descending ? "descending" : "ascending") : "none",
        tabindex: 0,
        onclick: () => sortBy(column, active ? !sort.descending : numeric || column === "last_recorded"),
        onkeydown: (/** @type {KeyboardEvent} */ event) => {
          if (event.key === "Enter" || event.key === " ") {
            event.preventDefault();
            sortBy(column, active ? !sort.descending : numeric || column === "last_recorded");
          }
        },
      }, label, arrow);
    }));
  }

  /** @param {string} column @param {boolean} descending */
  function sortBy(column, descending) {
    model.send({ kind: "runs-sort", column, descending });
  }

  function drawRows() {
    const page = model.get("page");
    const rows = page.rows || [];
    const selected = model.get("selection").threadId ?? null;
    replace(body, ...rows.map((row, i) => {
      const tr = h("tr", {
        class: `ae-runs-row${row.threadId === selected ? " ae-selected" : ""}`,
        tabindex: -1,
        "data-thread": row.threadId,
        "data-status": row.status,
        "aria-selected": row.threadId === selected ? "true" : "false",
        onclick: () => open(i),
        onfocus: () => { focused = i; },
      },
        h("td", { class: "ae-runs-thread", title: row.error ? `${row.threadId}: ${row.error}` : row.threadId }, row.threadId),
        h("td", { class: "ae-num" }, formatNumber(row.entries)),
        h("td", { class: "ae-num", title: row.lastRecorded || "no timestamp" }, formatRecorded(row.lastRecorded, { year: true }) || "—"),
        h("td", { class: "ae-runs-state-cell", title: row.state }, row.state || (row.error ? row.error : "")),
        h("td", {}, h("span", { class: `ae-chip ae-status ae-status-${row.status}`, title: STATUS_TITLES[row.status] || row.status },
          row.status, typeof row.owed === "number" && row.owed > 0 ? ` · ${row.owed} owed` : "")),
        h("td", {}, verifiedCell(row.verified, row.divergentIndex)),
        h("td", { class: "ae-num" }, formatNumber(row.tokens)),
        h("td", { class: "ae-num" }, costText(row.cost)),
      );
      return tr;
    }));
    const total = page.total || 0;
    const offset = page.offset || 0;
    pageLabel.textContent = total ? `${formatNumber(offset + 1)}–${formatNumber(offset + rows.length)} of ${formatNumber(total)}` : "";
    prev.toggleAttribute("disabled", offset <= 0);
    next.toggleAttribute("disabled", offset + rows.length >= total);
    const counts = model.get("counts");
    empty.hidden = rows.length > 0;
    empty.textContent = (counts.folded || 0) > 0 ? "No run matches these filters." : "No runs folded yet.";
    if (focused >= 0 && rows.length) {
      focused = Math.min(focused, rows.length - 1);
      if (root.contains(document.activeElement)) focusRow(focused);
    }
  }

  /** @param {number} i */
  function focusRow(i) {
    const tr = /** @type {HTMLElement | undefined} */ (body.children[i]);
    if (!tr) return;
    focused = i;
    tr.focus({ preventScroll: false });
  }

  /** @param {number} i */
  function open(i) {
    const row = (model.get("page").rows || [])[i];
    if (!row) return;
    focused = i;
    model.send({ kind: "runs-select", threadId: row.threadId });
  }

  body.addEventListener("keydown", (/** @type {KeyboardEvent} */ event) => {
    const count = body.children.length;
    if (!count) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const delta = event.key === "ArrowDown" ? 1 : -1;
      const target = focused + delta;
      if (target >= count) step(1);
      else if (target < 0) step(-1);
      else focusRow(target);
    } else if (event.key === "Enter") {
      event.preventDefault();
      open(focused);
    } else if (event.key === "PageDown" || event.key === "PageUp") {
      event.preventDefault();
      step(event.key === "PageDown" ? 1 : -1);
    } else if (event.key === "Home") {
      event.preventDefault();
      focusRow(0);
    } else if (event.key === "End") {
      event.preventDefault();
      focusRow(count - 1);
    }
  });
  // Tabbing into the table lands on the focused row (or the first).
  table.addEventListener("focusin", (/** @type {FocusEvent} */ event) => {
    if (event.target === table) focusRow(Math.max(focused, 0));
  });
  table.setAttribute("tabindex", "0");

  function drawCounts() {
    const counts = model.get("counts");
    const byStatus = counts.counts || {};
    const filter = model.get("page").filter;
    const chosen = new Set(filter ? filter.status : []);
    wanted.clear();
    for (const s of chosen) wanted.add(s);
    allChip.textContent = `all ${formatNumber(counts.folded || 0)}`;
    allChip.classList.toggle("on", chosen.size === 0);
    allChip.setAttribute("aria-pressed", chosen.size === 0 ? "true" : "false");
    for (const chip of chips) {
      const status = chip.getAttribute("data-status") || "";
      replace(chip, `${status} `, h("b", {}, formatNumber(byStatus[status] || 0)));
      chip.classList.toggle("on", chosen.has(status));
      chip.setAttribute("aria-pressed", chosen.has(status) ? "true" : "false");
    }
  }

  function drawFilter() {
    const filter = model.get("page").filter;
    if (!filter) return;
    const key = filterKey(filter);
    if (key !== drawnFilter && key !== sentFilter) typedLater.cancel(); // Python's newer filter wins
    drawnFilter = key;
    // A filter set from Python shows in the controls; what the user is typing is left alone.
    const stateEl = /** @type {HTMLInputElement} */ (stateInput);
    const textEl = /** @type {HTMLInputElement} */ (textInput);
    if (document.activeElement !== stateEl) stateEl.value = filter.state;
    if (document.activeElement !== textEl) textEl.value = filter.text;
    /** @type {HTMLSelectElement} */ (verifiedSelect).value = filter.verified === null ? "" : String(filter.verified);
  }

  function drawProgress() {
    const progress = model.get("progress");
    const counts = model.get("counts");
    const done = progress.done || 0;
    const total = progress.total || 0;
    const parts = [];
    if (progress.folding) parts.push(`folding ${formatNumber(done)} / ${plural(total, "thread")}…`);
    else parts.push(plural(counts.threads || total, "thread"));
    if (progress.following) parts.push("following the store");
    progressText.textContent = parts.join(" · ");
    bar.hidden = !progress.folding;
    const fill = /** @type {HTMLElement} */ (bar.firstChild);
    fill.style.width = `${total ? Math.round((100 * done) / total) : 0}%`;
    const selection = model.get("selection");
    const problem = progress.error || selection.error || null;
    notice.hidden = !problem;
    notice.textContent = problem || "";
  }

  const drawPage = () => {
    drawHead();
    drawRows();
    drawCounts();
    drawFilter();
  };
  drawPage();
  drawProgress();
  root.dataset.ready = "true";
  on("change:page", drawPage);
  on("change:counts", () => {
    drawCounts();
    drawProgress();
  });
  on("change:progress", drawProgress);
  on("change:selection", () => {
    drawRows();
    drawProgress();
  });

  return () => {
    typedLater.cancel();
    for (const [event, fn] of listeners) model.off(event, fn);
  };
}

export default { render };
