// @ts-check
// The windowed event table: draws the page of rows Python sent (`table` traitlet), asks for other pages and
// filters with `model.send({kind: "table", ...})`, jumps the cursor when a row is clicked.

import { debounce, formatNumber, h, replace } from "./dom.js";

export class EventTable {
  /** @param {import("./protocol").Model} model */
  constructor(model) {
    this.model = model;
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
      h("thead", {}, h("tr", {}, ...["#", "type", "recorded", "causation", "tokens", "payload"].map((t) => h("th", {}, t)))),
      this.body,
    );
    this.scroller = h("div", { class: "ae-table-scroll" }, this.table);
    this.el = h(
      "section",
      { class: "ae-panel ae-events", "data-testid": "events" },
      h("div", { class: "ae-panel-head" }, h("span", { class: "ae-panel-title" }, "Events"), this.typeSelect, this.search, h("span", { class: "ae-spacer" }), this.pageLabel, this.prev, this.next),
      this.scroller,
    );
  }

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
    const first = total ? page.offset + 1 : 0;
    this.pageLabel.textContent = `${formatNumber(first)}–${formatNumber(page.offset + rows.length)} of ${formatNumber(total)}`;
    this.prev.disabled = !page.offset;
    this.next.disabled = page.offset + rows.length >= total;
    const query = page.query || /** @type {Partial<import("./protocol").TableQuery>} */ ({});
    if (document.activeElement !== this.search && this.search.value !== (query.text || "")) this.search.value = query.text || "";
    if (this.typeSelect.value !== (query.type || "")) this.typeSelect.value = query.type || "";
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
            onclick: () => {
              this.model.set("index", row.index);
              this.model.save_changes();
            },
          },
          h("td", { class: "ae-num" }, String(row.index)),
          h("td", { class: "ae-type" }, row.type),
          h("td", { class: "ae-time" }, formatTime(row.recordedAt)),
          h("td", { class: "ae-cause", title: row.causationId || "" }, row.causationId ? String(row.causationId).slice(0, 12) : ""),
          h("td", { class: "ae-num" }, row.usage === null || row.usage === undefined ? "" : formatNumber(row.usage)),
          h("td", { class: "ae-payload", title: row.summary || "" }, row.summary || ""),
        );
      }),
    );
    this.markCurrent(index);
  }

  markCurrent(index) {
    for (const tr of this.body.children) {
      const on = Number(tr.dataset.index) === index;
      tr.classList.toggle("current", on);
      if (on) {
        const top = tr.offsetTop;
        const bottom = top + tr.offsetHeight;
        const view = this.scroller;
        if (top < view.scrollTop + 24 || bottom > view.scrollTop + view.clientHeight) view.scrollTop = Math.max(0, top - view.clientHeight / 3);
      }
    }
  }
}

function formatTime(iso) {
  if (typeof iso !== "string") return "";
  // 2026-01-02T03:04:05.678Z -> 03:04:05.678 (the date is in the tooltip of the entry panel)
  const match = /T(\d\d:\d\d:\d\d(?:\.\d{1,3})?)/.exec(iso);
  return match ? match[1] : iso;
}
