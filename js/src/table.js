// @ts-check
// The windowed event table: draws the page of rows Python sent (`table` traitlet), asks for other pages and
// filters with `model.send({kind: "table", ...})`, jumps the cursor when a row is clicked.

import { debounce, formatNumber, formatRecorded, h, replace } from "./dom.js";

const HEADINGS = [
  ["#", "index in the log"],
  ["type", "event type"],
  ["recorded", "when the entry was recorded: month-day and time as the log has it (hover a cell for the full timestamp)"],
  ["causation", "the request that caused the entry (causationId)"],
  ["tokens", "total tokens of a usage record"],
  ["payload", "the event without its type"],
];

export class EventTable {
  /** @param {import("./protocol").Model} model @param {(i: number) => void} setIndex */
  constructor(model, setIndex) {
    this.model = model;
    this.setIndex = setIndex;
    this.typeSelect = h("select", { class: "ae-input", "aria-label": "Filter by event type", onchange: () => this.request(0) });
    this.search = h("input", {
      class: "ae-input ae-search",
      type: "search",
      placeholder: "Search events…",
      "aria-label": "Search event payloads",
    });
    const searchLater = debounce(() => this.request(0), 250);
    this.search.addEventListener("input", searchLater);
    this.pageLabel = h("span", { class: "ae-muted ae-page-label" });
    this.prev = h("button", { class: "ae-btn ae-btn-small", title: "Previous page", onclick: () => this.step(-1) }, "‹");
    this.next = h("button", { class: "ae-btn ae-btn-small", title: "Next page", onclick: () => this.step(1) }, "›");
    this.body = h("tbody");
    this.table = h(
      "table",
      { class: "ae-table" },
      h("thead", {}, h("tr", {}, ...HEADINGS.map(([label, title]) => h("th", { title }, label)))),
      this.body,
    );
    this.scroller = h("div", { class: "ae-table-scroll" }, this.table);
    /** @type {Element | null} the row the table last scrolled to */
    this.scrolledTo = null;
    // A table drawn while it had no size (a notebook output out of view, or not yet laid out) could not scroll to
    // its current row: once it has a size, scroll again. Only then: any other resize (the usage panel beside it
    // growing) leaves the user's own scroll alone.
    /** @type {number | null} */
    this.current = null;
    this.lastHeight = 0;
    this.resizer = typeof ResizeObserver === "undefined" ? null : new ResizeObserver(() => {
      const height = this.scroller.clientHeight;
      const appeared = !this.lastHeight && height > 0;
      this.lastHeight = height;
      if (!appeared || this.current === null) return;
      this.scrolledTo = null;
      this.markCurrent(this.current);
    });
    this.resizer?.observe(this.scroller);
    this.el = h(
      "section",
      { class: "ae-panel ae-events", "data-testid": "events" },
      h("div", { class: "ae-panel-head" }, h("span", { class: "ae-panel-title" }, "Events"), this.typeSelect, this.search, h("span", { class: "ae-spacer" }), this.pageLabel, this.prev, this.next),
      this.scroller,
    );
  }

  /** @param {number} offset */
  request(offset) {
    const page = this.model.get("table");
    this.model.send({
      kind: "table",
      offset: Math.max(0, offset),
      limit: page.limit || 100,
      type: this.typeSelect.value,
      text: this.search.value,
    });
  }

  /** @param {number} direction  -1 for the previous page, 1 for the next */
  step(direction) {
    const page = this.model.get("table");
    this.request((page.offset || 0) + direction * (page.limit || 100));
  }

  /** @param {import("./protocol").Traits["table_types"]} types */
  drawTypes(types) {
    const current = this.typeSelect.value;
    const options = [h("option", { value: "" }, "all types")];
    for (const [type, count] of types || []) options.push(h("option", { value: type }, `${type} (${formatNumber(count)})`));
    replace(this.typeSelect, options);
    this.typeSelect.value = current;
  }

  /** @param {import("./protocol").Traits["table"]} page @param {number} index */
  draw(page, index) {
    const rows = page.rows || [];
    const total = page.total || 0;
    const offset = page.offset || 0;
    const first = total ? offset + 1 : 0;
    this.pageLabel.textContent = total ? `rows ${formatNumber(first)}–${formatNumber(offset + rows.length)} of ${formatNumber(total)}` : "0 rows";
    this.pageLabel.title = "rows of this table (filtered or not), counted from 1; the # column is each entry's index in the log, from 0";
    this.prev.disabled = !offset;
    this.next.disabled = offset + rows.length >= total;
    const query = page.query || /** @type {Partial<import("./protocol").TableQuery>} */ ({});
    if (document.activeElement !== this.search && this.search.value !== (query.text || "")) this.search.value = query.text || "";
    if (this.typeSelect.value !== (query.type || "")) this.typeSelect.value = query.type || "";
    if (!rows.length) {
      replace(this.body, this.emptyRow(query, total));
      this.markCurrent(index);
      return;
    }
    replace(
      this.body,
      rows.map((row) => {
        const cls = ["ae-row"];
        if (row.divergent) cls.push("divergent");
        if (row.index === index) cls.push("current");
        return h(
          "tr",
          {
            class: cls.join(" "),
            dataset: { index: String(row.index) },
            title: `Jump to index ${row.index}`,
            onclick: () => this.setIndex(row.index),
          },
          h("td", { class: "ae-num" }, String(row.index)),
          h("td", { class: "ae-type", title: row.type }, breakable(row.type)),
          h("td", { class: "ae-time", title: row.recordedAt || "" }, formatRecorded(row.recordedAt)),
          h("td", { class: "ae-cause", title: row.causationId || "" }, row.causationId ? String(row.causationId) : ""),
          h("td", { class: "ae-num" }, row.usage === null || row.usage === undefined ? "" : formatNumber(row.usage)),
          h("td", { class: "ae-payload", title: row.summary || "" }, row.summary || ""),
        );
      }),
    );
    this.markCurrent(index);
  }

  /**
   * The one row of an empty result: what matched nothing, and a way back to every entry.
   * @param {Partial<import("./protocol").TableQuery>} query @param {number} total
   */
  emptyRow(query, total) {
    const type = query.type || "";
    const text = query.text || "";
    const what = [type ? `type ${type}` : null, text ? `text “${text}”` : null].filter(Boolean).join(" and ");
    const clear = h("button", { class: "ae-btn ae-btn-small", "data-testid": "table-clear", onclick: () => this.clearFilter() }, "clear filter");
    const message = what ? [`no entries match ${what} `, clear] : [total ? "" : "no entries"];
    return h("tr", { class: "ae-empty" }, h("td", { colspan: String(HEADINGS.length), "data-testid": "table-empty" }, ...message));
  }

  clearFilter() {
    this.typeSelect.value = "";
    this.search.value = "";
    this.request(0); // Python opens the unfiltered table on the cursor's page
  }

  disconnect() {
    this.resizer?.disconnect();
  }

  /** @param {number} index */
  markCurrent(index) {
    this.current = index;
    let current = null;
    for (const tr of /** @type {HTMLCollectionOf<HTMLTableRowElement>} */ (this.body.children)) {
      const on = Number(tr.dataset.index) === index;
      tr.classList.toggle("current", on);
      if (on) current = tr;
    }
    // Reading offsetTop forces a layout: only when the current row is another one than last time (a followed run
    // redraws every refresh with the cursor often on the same row).
    if (!current || current === this.scrolledTo) return;
    const view = this.scroller;
    if (!view.clientHeight) return; // no size yet: the resize observer scrolls once there is one
    this.scrolledTo = current;
    const top = current.offsetTop;
    const bottom = top + current.offsetHeight;
    const head = this.table.tHead ? this.table.tHead.offsetHeight : 0;
    if (top < view.scrollTop + head || bottom > view.scrollTop + view.clientHeight) {
      // The current row a third of the way down, snapped so that the first row in view starts right under the
      // sticky header rather than half hidden behind it.
      const want = Math.max(0, top - view.clientHeight / 3);
      let snap = 0;
      for (const tr of this.body.children) {
        const at = /** @type {HTMLElement} */ (tr).offsetTop - head;
        if (at > want) break;
        snap = at;
      }
      view.scrollTop = Math.max(0, snap);
    }
  }
}

/**
 * A dotted name (`xstate.done.actor.lookupOrder`) that may wrap after its dots instead of being clipped.
 * @param {string} text
 */
function breakable(text) {
  const parts = String(text).split(".");
  return parts.flatMap((part, k) => (k < parts.length - 1 ? [`${part}.`, h("wbr")] : [part]));
}
