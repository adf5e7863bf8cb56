// The static model shim of `Explorer.to_html`: answers the widget's `model.get/set/on/off/send` from data
// exported by Python (traitlets, one frame per index of the window, that window's table rows), so the same
// front end runs in a plain HTML file with no kernel. Intents that need Python (effects on demand, coverage
// of other logs, JSON-path search) are answered from what was exported, or shown as not available here.

const PAGE = 100;

export function createStaticModel(data) {
  const start = data.start || 0;
  const stop = data.stop ?? (data.frames || []).length - 1;
  const rows = data.rows || [];
  const traits = { ...(data.traits || {}) };
  const listeners = new Map();
  let dirty = new Set();
  let tableQuery = { type: "", text: "" };

  const clamp = (i) => Math.max(start, Math.min(stop, Math.round(Number(i) || 0)));
  const frameAt = (i) => (data.frames || [])[clamp(i) - start] || {};

  function filtered() {
    const type = tableQuery.type;
    const text = (tableQuery.text || "").toLowerCase();
    if (!type && !text) return rows;
    return rows.filter((row) => (!type || row.type === type) && (!text || JSON.stringify([row.id, row.causationId, row.type, row.summary]).toLowerCase().includes(text)));
  }

  function page(offset, limit = PAGE) {
    const all = filtered();
    const at = Math.max(0, Math.min(offset, Math.max(0, all.length - 1)));
    return { offset: at, limit, total: all.length, rows: all.slice(at, at + limit), query: { ...tableQuery } };
  }

  function followTable(index) {
    const current = traits.table || {};
    const inPage = (current.rows || []).some((row) => row.index === index);
    if (inPage) return;
    const position = filtered().findIndex((row) => row.index === index);
    if (position < 0) return;
    traits.table = page(Math.floor(position / PAGE) * PAGE);
    dirty.add("table");
  }

  function emit() {
    const names = [...dirty];
    dirty = new Set();
    for (const name of names) for (const fn of listeners.get(`change:${name}`) || []) fn();
  }

  function staticSearch(message) {
    const text = String(message.text || "");
    if (!text) {
      traits.search_results = {};
    } else if (message.path) {
      traits.search_results = { query: { text, path: message.path, regex: !!message.regex, scope: message.scope }, total: 0, offset: 0, limit: 50, hits: [], error: "JSON-path search needs the notebook; this static page searches text only" };
    } else {
      let test;
      try {
        const re = message.regex ? new RegExp(text, "i") : null;
        const needle = text.toLowerCase();
        test = re ? (s) => re.test(s) : (s) => s.toLowerCase().includes(needle);
      } catch (error) {
        traits.search_results = { query: { text, regex: true }, total: 0, offset: 0, limit: 50, hits: [], error: String(error.message || error) };
        dirty.add("search_results");
        emit();
        return;
      }
      const hits = [];
      const scope = message.scope || "both";
      for (let i = start; i <= stop; i++) {
        const row = rows[i - start];
        if (scope !== "context" && row && test(`${row.id} ${row.type} ${row.summary}`)) hits.push({ index: i, where: "event", path: "event", text: row.summary || row.type, until: i });
        const context = frameAt(i).context;
        if (scope !== "events" && context !== undefined && test(JSON.stringify(context))) hits.push({ index: i, where: "context", path: "context", text: "", until: i });
      }
      traits.searchAll = hits;
      traits.search_results = { query: { text, regex: !!message.regex, scope, path: "" }, total: hits.length, offset: 0, limit: 50, hits: hits.slice(0, 50), marks: [...new Set(hits.map((hit) => hit.index))].slice(0, 2000) };
    }
    dirty.add("search_results");
    emit();
  }

  traits.searchAll = data.searchHits || []; // the notebook's last search, within this window
  traits.index = clamp(data.index ?? start);
  traits.frame = frameAt(traits.index);
  traits.table = page(0);
  followTable(traits.index);
  dirty = new Set();

  return {
    static: true,
    get: (name) => traits[name],
    set(name, value) {
      if (name === "index") {
        const next = clamp(value);
        traits.index = next;
        traits.frame = frameAt(next);
        dirty.add("index");
        dirty.add("frame");
        followTable(next);
        // The slider asked for an index outside the window: snap it back visibly.
        if (next !== value) dirty.add("index");
        return;
      }
      traits[name] = value;
      dirty.add(name);
    },
    save_changes: () => queueMicrotask(emit),
    on(event, fn) {
      if (!listeners.has(event)) listeners.set(event, new Set());
      listeners.get(event).add(fn);
    },
    off(event, fn) {
      listeners.get(event)?.delete(fn);
    },
    send(message) {
      if (!message || typeof message !== "object") return;
      if (message.kind === "table") {
        tableQuery = { type: String(message.type || ""), text: String(message.text || "") };
        traits.table = page(Number(message.offset) || 0, Number(message.limit) || PAGE);
        dirty.add("table");
        emit();
      } else if (message.kind === "search") {
        staticSearch(message);
      } else if (message.kind === "search-page") {
        const all = traits.searchAll || [];
        const offset = Math.max(0, Number(message.offset) || 0);
        traits.search_results = { ...(traits.search_results || {}), offset, hits: all.slice(offset, offset + 50) };
        dirty.add("search_results");
        emit();
      }
      // "effects", "coverage", "usage-ledger" need the kernel: the page shows what was exported.
    },
  };
}
