// The static model shim of `Explorer.to_html`: answers the widget's `model.get/set/on/off/send` from data
// exported by Python (traitlets, one frame per index of the window, that window's table rows, and the window's
// events and contexts for the search), so the same front end runs in a plain HTML file with no kernel. The search
// and the table's filter run pysearch.js over the exported data: the same algorithm as the notebook's, so the same
// hits. Intents that need Python (effects on demand, coverage of other logs, composing) are shown as not available.

import { hitMarks, hitRanges, MARKS_CAP, searchCorpus, searchPage, tableMatches, thin } from "./pysearch.js";

const PAGE = 100;

/** @typedef {import("./protocol").Traits} Traits */
/** @typedef {import("./protocol").SearchHitView} SearchHitView */
/**
 * What `Explorer.to_html` exports (explorer/export.py `static_payload`). The page reads it defensively (a field
 * left out reads as empty); `search` is always there.
 * @typedef {object} StaticData
 * @property {number} [start]  the window [start, stop] of indices exported
 * @property {number} [stop]
 * @property {number} [index]  the cursor when exported
 * @property {Partial<Traits>} [traits]  every synced traitlet but index, frame and table (the shim makes those)
 * @property {Array<Traits["frame"]>} [frames]  one per index of the window
 * @property {import("./protocol").TableRow[]} [rows]  one per index of the window
 * @property {SearchHitView[]} [searchHits]  the notebook's last search, within the window
 * @property {import("./pysearch.js").SearchCorpus} search  what the page's own search and filter read
 */

/** table.py `page_offset`: pages start at multiples of `limit`; the last one ends at the last row.
 *  @param {number} offset @param {number} limit @param {number} total */
function pageOffset(offset, limit, total) {
  const aligned = Math.floor(Math.max(0, offset) / limit) * limit;
  return Math.max(0, Math.min(aligned, total - limit));
}

/** The table filter's row indices over the exported window (what the page's table shows for type/text).
 *  @param {StaticData} data @param {string} type @param {string} text */
export function staticTableMatches(data, type, text) {
  return tableMatches(data.search || {}, data.rows || [], type, text);
}

/** The search's hits for `query` over the exported window, with marks for the track (search.py's payload).
 *  @param {StaticData} data @param {import("./protocol").SearchQueryView} query */
export function staticSearchResults(data, query) {
  try {
    const hits = searchCorpus(data.search || {}, query);
    return { all: hits, page: { ...searchPage(hits, query), marks: hitMarks(hits), ranges: hitRanges(hits) } };
  } catch (error) {
    return { all: [], page: searchPage([], query, 0, String(/** @type {Error} */ (error).message || error)) };
  }
}

/**
 * The anywidget model the front end draws from, answered from the exported data.
 * @param {StaticData} data @returns {import("./protocol").Model}
 */
export function createStaticModel(data) {
  const start = data.start || 0;
  const stop = data.stop ?? (data.frames || []).length - 1;
  const rows = data.rows || [];
  // Every traitlet the front end reads: the exported ones, and index, frame and table set below.
  const traits = /** @type {Traits & {searchAll?: SearchHitView[]}} */ ({ ...(data.traits || {}) });
  /** @type {Map<string, Set<Parameters<import("./protocol").Model["on"]>[1]>>} */
  const listeners = new Map();
  /** @type {Set<string>} the traitlets changed since listeners last heard */
  let dirty = new Set();
  let tableQuery = { type: "", text: "" };

  /** @param {unknown} i */
  const clamp = (i) => Math.max(start, Math.min(stop, Math.round(Number(i) || 0)));
  /** @param {unknown} i @returns {Traits["frame"]} */
  const frameAt = (i) => (data.frames || [])[clamp(i) - start] || {};

  /** Rows passing the table's filter (table.py's rules, over the exported events); every row when none is set. */
  function filtered() {
    const type = tableQuery.type;
    const text = tableQuery.text || "";
    if (!type && !text) return rows;
    return tableMatches(data.search, rows, type, text).map((i) => rows[i - start]);
  }

  /** @param {number} offset @param {number} [limit] @param {import("./protocol").TableRow[]} [all] */
  function page(offset, limit = PAGE, all = filtered()) {
    const at = pageOffset(offset, limit, all.length);
    const filteredOn = !!(tableQuery.type || tableQuery.text);
    const marks = filteredOn ? thin(all.map((row) => row.index), MARKS_CAP) : [];
    return { offset: at, limit, total: all.length, rows: all.slice(at, at + limit), query: { ...tableQuery }, marks };
  }

  /** The page holding the cursor's row (or, when the filter hides it, the first match after it). */
  function cursorPage(limit = PAGE) {
    const all = filtered();
    let position = all.findIndex((row) => row.index >= traits.index);
    if (position < 0) position = all.length - 1;
    return page(Math.max(0, position), limit, all);
  }

  /** @param {number} index */
  function followTable(index) {
    const current = traits.table || {};
    const inPage = (current.rows || []).some((row) => row.index === index);
    if (inPage) return;
    const all = filtered();
    const position = all.findIndex((row) => row.index === index);
    if (position < 0) return;
    traits.table = page(position, current.limit || PAGE, all);
    dirty.add("table");
  }

  function emit() {
    const names = [...dirty];
    dirty = new Set();
    for (const name of names) for (const fn of listeners.get(`change:${name}`) || []) fn();
  }

  /** @param {import("./protocol").SearchMessage} message */
  function staticSearch(message) {
    const text = String(message.text || "");
    if (!text) {
      traits.search_results = {};
      traits.searchAll = [];
    } else {
      const query = { text, regex: !!message.regex, path: String(message.path || ""), scope: String(message.scope || "both"), case: !!message.case, type: "" };
      const found = staticSearchResults(data, query);
      traits.searchAll = found.all;
      traits.search_results = found.page;
    }
    dirty.add("search_results");
    emit();
  }

  traits.searchAll = data.searchHits || []; // the notebook's last search, within this window
  const saved = traits.search_results?.query;
  if (saved?.text) {
    // Run it again here: the same hits as the notebook's within this window, and the page can page through them.
    const found = staticSearchResults(data, saved);
    if (!found.page.error) {
      traits.searchAll = found.all;
      traits.search_results = found.page;
    }
  }
  traits.index = clamp(data.index ?? start);
  traits.frame = frameAt(traits.index);
  traits.table = page(0);
  followTable(traits.index);
  dirty = new Set();

  const whole = start === 0 && stop >= (traits.length || stop + 1) - 1;
  return {
    window: whole ? undefined : [start, stop],
    get: (name) => traits[name],
    set(name, value) {
      if (name === "index") {
        const next = clamp(value);
        traits.index = next;
        traits.frame = frameAt(next);
        dirty.add("index");
        dirty.add("frame");
        followTable(next); // an index outside the window snaps back: "index" is dirty either way
        return;
      }
      traits[name] = value;
      dirty.add(name);
    },
    save_changes: () => queueMicrotask(emit),
    on(event, fn) {
      if (!listeners.has(event)) listeners.set(event, new Set());
      listeners.get(event)?.add(fn);
    },
    off(event, fn) {
      listeners.get(event)?.delete(fn);
    },
    send(message) {
      if (!message || typeof message !== "object") return;
      if (message.kind === "table") {
        const next = { type: String(message.type || ""), text: String(message.text || "") };
        const changed = next.type !== tableQuery.type || next.text !== tableQuery.text;
        tableQuery = next;
        // As panels/table.py: a new filter (or one cleared) opens on the cursor's place, a page turn where asked.
        traits.table = changed ? cursorPage(Number(message.limit) || PAGE) : page(Number(message.offset) || 0, Number(message.limit) || PAGE);
        dirty.add("table");
        emit();
      } else if (message.kind === "search") {
        staticSearch(message);
      } else if (message.kind === "search-page") {
        const all = traits.searchAll || [];
        const current = traits.search_results || {};
        const { offset, hits } = searchPage(all, current.query || /** @type {import("./protocol").SearchQueryView} a page turn follows a search: its query is there */ ({}), Number(message.offset) || 0);
        traits.search_results = { ...current, offset, hits };
        dirty.add("search_results");
        emit();
      }
      // "effects", "coverage", "usage-ledger" need the kernel: the page shows what was exported.
    },
  };
}
