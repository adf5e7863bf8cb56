// @ts-check
// Search panel: a query (substring or regex, optional JSON path, events / context / both) is sent to Python,
// which searches the whole log and sends back one page of hits (`search_results`); hits are also marked on the
// slider track (`search_results.marks`, drawn by track.js). Clicking a hit moves the cursor. Hit text is drawn as text.

import { debounce, formatNumber, h, plural, replace } from "./dom.js";

export class SearchPanel {
  /** @param {import("./protocol").Model} model @param {(i: number) => void} setIndex */
  constructor(model, setIndex) {
    this.model = model;
    this.setIndex = setIndex;
    const send = () => this.run();
    const later = debounce(send, 300);
    this.text = h("input", { class: "ae-input ae-search ae-search-text", type: "search", placeholder: "Search events and context…", title: "Text to find in every event and every context (case-insensitive); Enter searches at once", "aria-label": "Search text or regex", "data-testid": "search-text" });
    this.text.addEventListener("input", later);
    this.text.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        later.cancel();
        send();
      }
    });
    this.regex = h("input", { type: "checkbox", "aria-label": "Regular expression", "data-testid": "search-regex", onchange: send });
    this.regexLabel = h("label", { class: "ae-check", title: "Treat the text as a regular expression (Python's re syntax, case-insensitive)", "data-testid": "search-regex-label" }, this.regex, "regex");
    this.path = h("input", { class: "ae-input ae-search-path", type: "text", placeholder: "JSON path (optional)", title: "Only under this JSON path, e.g. context.order.id, event.output.text or context.items[*].name", "aria-label": "JSON path", "data-testid": "search-path" });
    this.path.addEventListener("input", later);
    this.scope = h("select", { class: "ae-input", "aria-label": "Where to search", "data-testid": "search-scope", onchange: send }, h("option", { value: "both" }, "events + context"), h("option", { value: "events" }, "events"), h("option", { value: "context" }, "context"));
    this.summary = h("span", { class: "ae-muted", "data-testid": "search-summary" });
    this.prev = h("button", { class: "ae-btn ae-btn-small", title: "Previous hits", "aria-label": "Previous hits", onclick: () => this.page(-1) }, "‹");
    this.next = h("button", { class: "ae-btn ae-btn-small", title: "Next hits", "aria-label": "Next hits", onclick: () => this.page(1) }, "›");
    this.list = h("ol", { class: "ae-hits", "data-testid": "search-hits" });
    this.el = h(
      "section",
      { class: "ae-panel ae-search-panel", "data-testid": "search" },
      h("div", { class: "ae-panel-head ae-wrap" }, h("span", { class: "ae-panel-title" }, "Search"), this.text, this.regexLabel, this.path, this.scope, h("span", { class: "ae-spacer" }), this.summary, this.prev, this.next),
      this.list,
    );
  }

  run() {
    this.model.send({ kind: "search", text: this.text.value, regex: this.regex.checked, path: this.path.value, scope: this.scope.value });
  }

  /** @param {number} direction  -1 for the previous page of hits, 1 for the next */
  page(direction) {
    const r = this.model.get("search_results");
    const offset = (r.offset || 0) + direction * (r.limit || 50);
    if (offset < 0 || offset >= (r.total || 0)) return;
    this.model.send({ kind: "search-page", offset });
  }

  /** @param {import("./protocol").Traits["search_results"]} results @param {number} index */
  draw(results, index) {
    const r = results;
    const q = r.query || /** @type {Partial<import("./protocol").SearchQueryView>} */ ({});
    // A search run from Python (ex.search(...)) shows its query in the inputs.
    if (q.text !== undefined && document.activeElement !== this.text && document.activeElement !== this.path) {
      this.text.value = q.text || "";
      this.path.value = q.path || "";
      this.regex.checked = !!q.regex;
      this.scope.value = q.scope || "both";
    }
    const hits = r.hits || [];
    this.prev.disabled = !((r.offset || 0) > 0);
    this.next.disabled = !((r.offset || 0) + hits.length < (r.total || 0));
    if (r.pending) {
      this.summary.textContent = `searching… ${Math.round((r.progress || 0) * 100)}%`;
      return;
    }
    if (r.error) {
      replace(this.summary, h("span", { class: "ae-bad-text" }, r.error));
      replace(this.list);
      return;
    }
    if (r.total === undefined) {
      replace(this.summary, "");
      replace(this.list);
      return;
    }
    this.summary.textContent = r.total ? `${formatNumber((r.offset || 0) + 1)}–${formatNumber((r.offset || 0) + hits.length)} of ${plural(r.total, "hit")}` : "no hits";
    const shown = JSON.stringify([q, r.offset || 0, r.total]);
    if (shown !== this.shown) this.list.scrollTop = 0; // another page or query starts at its first hit
    /** @type {string | undefined} the page on view (query, offset, total), to know when another one starts */
    this.shown = shown;
    replace(
      this.list,
      hits.map((hit) =>
        h(
          "li",
          { class: `ae-hit${hit.index <= index && index <= hit.until ? " current" : ""}`, "data-index": hit.index, "data-until": hit.until, title: `go to index ${hit.index}`, onclick: () => this.setIndex(hit.index) },
          h("span", { class: "ae-hit-index" }, hit.until > hit.index ? `${formatNumber(hit.index)}–${formatNumber(hit.until)}` : formatNumber(hit.index)),
          h("span", { class: `ae-chip ae-hit-where ${hit.where}` }, hit.where),
          h("code", { class: "ae-hit-path" }, hit.path),
          h("span", { class: "ae-hit-text" }, hit.text),
        ),
      ),
    );
  }

  /** One pass over the drawn hits: each <li> carries its range in data-index / data-until. @param {number} index */
  markCurrent(index) {
    for (const li of this.list.children) {
      const el = /** @type {HTMLElement} */ (li);
      el.classList.toggle("current", Number(el.dataset.index) <= index && index <= Number(el.dataset.until));
    }
  }
}
