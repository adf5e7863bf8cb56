// @ts-check
// The notebook's search (agent_explorer/explorer/search.py `search_log`, `search_page`, `hit_marks`, `hit_ranges`)
// and the event table's text filter (explorer/table.py), run over the data Explorer.to_html exports
// (explorer/search_data.py), so a static page finds the same hits, paths, excerpts and spans as the live widget.
// Values arrive as tagged trees carrying Python's text of each value and the JSON orjson writes for it. Pure: no DOM.

import { literalRegExp, PatternError, pyRepr, pyStrip, pythonRegExp, UnsupportedPattern } from "./pyregex.js";

const EXCERPT = 120;
const PATHS_PER_HIT = 8;
const PAGE = 50;
/** search.py `MARKS_CAP` / panels/table.py: at most this many marks on the slider track. */
export const MARKS_CAP = 2000;
const RANGES_CAP = 500;
const SCALAR = 0;
const LIST = 1;
const MAP = 2;
const LIST_X = 3;
const MAP_X = 4;
const DEPTH_LIMIT = 254; // orjson refuses deeper nesting

/**
 * A value as explorer/search_data.py encodes it: a str leaf, or a list led by its tag: [SCALAR, text, json?],
 * [LIST, item...], [MAP, key, value...] (a non-str key is [text]), [LIST_X | MAP_X, json, ...as LIST / MAP].
 * @typedef {string | TreeList} TreeNode
 */
/**
 * A tagged list. `any[]`, not a tuple type: its items are a tag, texts, keys and child nodes by position, so every
 * positional read would need its own cast; the tag checks below (isMap, isList, SCALAR) are what tell them apart.
 * @typedef {any[]} TreeList
 */
/** A parsed search path's segments: keys, list indices, and "*". @typedef {Array<string | number>} Segments */
/**
 * What the static export's search reads (search_data.py `search_corpus`): each event as [id, causationId, event,
 * the table filter's text where orjson could not write it], each context run as [index, context, unsearched].
 * @typedef {object} SearchCorpus
 * @property {number} [start]
 * @property {Array<[TreeNode, TreeNode, TreeNode, string?]>} [events]
 * @property {Array<[number, TreeNode, boolean]> | null} [contexts]
 */
/** A hit as search_log finds it, with every path it matched (the payload keeps the first). @typedef {import("./protocol").SearchHitView & {paths: string[]}} FoundHit */
/** @typedef {Partial<import("./protocol").SearchQueryView>} Query  a query; what it leaves out takes its default */

/** @param {TreeNode} node */
const isMap = (node) => Array.isArray(node) && (node[0] === MAP || node[0] === MAP_X);
/** @param {TreeNode} node */
const isList = (node) => Array.isArray(node) && (node[0] === LIST || node[0] === LIST_X);
/** @param {TreeNode} node  a list (isMap or isList) */
const firstChild = (node) => (node[0] === MAP || node[0] === LIST ? 1 : 2);
/** @param {string | string[]} key */
const keyText = (key) => (typeof key === "string" ? key : key[0]);

/** (path, text) of every leaf under `node`, in Python's order (search.py `_leaves`).
 *  @param {TreeNode} node @param {string} path @param {Array<[string, string]>} out */
function leaves(node, path, out) {
  if (typeof node === "string") out.push([path, node]);
  else if (node[0] === SCALAR) out.push([path, node[1]]);
  else if (isMap(node)) for (let k = firstChild(node); k < node.length; k += 2) leaves(node[k + 1], path ? `${path}.${keyText(node[k])}` : keyText(node[k]), out);
  else for (let k = firstChild(node), i = 0; k < node.length; k++, i++) leaves(node[k], `${path}[${i}]`, out);
  return out;
}

/** The nodes a parsed path names under `node`, with their paths (search.py `_select`).
 *  @param {TreeNode} node @param {Segments} segments @param {number} at @param {string} path
 *  @param {Array<[string, TreeNode]>} out */
function select(node, segments, at, path, out) {
  if (at === segments.length) {
    out.push([path, node]);
    return out;
  }
  const head = segments[at];
  if (head === "*") {
    if (isMap(node)) for (let k = firstChild(node); k < node.length; k += 2) select(node[k + 1], segments, at + 1, `${path}.${keyText(node[k])}`, out);
    else if (isList(node)) for (let k = firstChild(node), i = 0; k < node.length; k++, i++) select(node[k], segments, at + 1, `${path}[${i}]`, out);
  } else if (typeof head === "number") {
    if (isList(node) && head < node.length - firstChild(node)) select(node[firstChild(node) + head], segments, at + 1, `${path}[${head}]`, out);
  } else if (isMap(node)) {
    for (let k = firstChild(node); k < node.length; k += 2) {
      if (node[k] === head) {
        select(node[k + 1], segments, at + 1, `${path}.${head}`, out);
        break;
      }
    }
  }
  return out;
}

/** orjson's text of a string. @param {string} text */
function jsonString(text) {
  let out = '"';
  for (let k = 0; k < text.length; k++) {
    const c = text.charCodeAt(k);
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += "\\\\";
    else if (c >= 0x20) out += text[k];
    else if (c === 0x08) out += "\\b";
    else if (c === 0x09) out += "\\t";
    else if (c === 0x0a) out += "\\n";
    else if (c === 0x0c) out += "\\f";
    else if (c === 0x0d) out += "\\r";
    else out += `\\u${c.toString(16).padStart(4, "0")}`;
  }
  return `${out}"`;
}

/** @type {WeakMap<TreeList, string | null>} */
const blobs = new WeakMap();
/** What `orjson.dumps(value, default=str)` writes for the node (null: orjson cannot write it).
 *  @param {TreeNode} node @param {number} [depth] @returns {string | null} */
function blobOf(node, depth = 0) {
  if (typeof node === "string") return jsonString(node);
  if (node[0] === SCALAR) return node.length > 2 ? node[2] : node[1];
  if (node[0] === LIST_X || node[0] === MAP_X) return node[1];
  if (depth === 0 && blobs.has(node)) return /** @type {string | null} */ (blobs.get(node));
  /** @type {string | null} */
  let out = null;
  if (depth < DEPTH_LIMIT) {
    /** @type {string[]} */
    const parts = [];
    let ok = true;
    if (node[0] === LIST) {
      for (let k = 1; k < node.length && ok; k++) {
        const part = blobOf(node[k], depth + 1);
        if (part === null) ok = false;
        else parts.push(part);
      }
      if (ok) out = `[${parts.join(",")}]`;
    } else {
      for (let k = 1; k < node.length && ok; k += 2) {
        const part = typeof node[k] === "string" ? blobOf(node[k + 1], depth + 1) : null;
        if (part === null) ok = false;
        else parts.push(`${jsonString(node[k])}:${part}`);
      }
      if (ok) out = `{${parts.join(",")}}`;
    }
  }
  if (depth === 0) blobs.set(node, out);
  return out;
}

/** @type {WeakMap<TreeList, string | null>} */
const lowered = new WeakMap();
/** @param {TreeList} node @returns {string | null} */
function lowerBlob(node) {
  if (!lowered.has(node)) {
    const blob = blobOf(node);
    lowered.set(node, blob === null ? null : blob.toLowerCase());
  }
  return /** @type {string | null} set above */ (lowered.get(node));
}

/** Python's `_excerpt`: long texts cut around the match, counted in code points as Python counts.
 *  @param {string} text @param {number} utf16Index */
function excerpt(text, utf16Index) {
  if (text.length <= EXCERPT) return text; // at most as many code points as UTF-16 units
  const chars = Array.from(text);
  if (chars.length <= EXCERPT) return text;
  const at = Array.from(text.slice(0, utf16Index)).length;
  const start = Math.max(0, at - Math.floor(EXCERPT / 3));
  const piece = chars.slice(start, start + EXCERPT).join("");
  return (start ? "…" : "") + piece + (start + EXCERPT < chars.length ? "…" : "");
}

const SEGMENT = /\[(\p{Nd}+|\*)\]|\.?([^.[\]]+)/gu;
/** Python's int() of a run of Unicode decimal digits (each digit's value is its offset in its block of ten).
 *  @param {string} text */
function digitsValue(text) {
  let value = 0;
  for (const c of text) {
    const code = /** @type {number} */ (c.codePointAt(0));
    let zero = code;
    while (/\p{Nd}/u.test(String.fromCodePoint(zero - 1))) zero -= 1;
    value = value * 10 + ((code - zero) % 10);
  }
  return value;
}

/** search.py `parse_path`: (scope or null, segments); throws the same message Python's AgentError carries.
 *  @param {string} path @returns {{scope: string | null, segments: Segments}} */
function parsePath(path) {
  let text = pyStrip(path);
  if (text.startsWith("$")) text = text.slice(1).replace(/^\.+/, "");
  /** @type {Segments} */
  const segments = [];
  let position = 0;
  /** @param {string} s */
  const units = (s) => Array.from(s).length;
  SEGMENT.lastIndex = 0;
  for (let m = SEGMENT.exec(text); m !== null; m = SEGMENT.exec(text)) {
    if (units(text.slice(0, m.index)) !== position) throw new Error(`search path ${pyRepr(path)} is not a JSON path (at character ${position})`);
    const [, index, key] = m;
    segments.push(index === "*" ? "*" : index !== undefined ? digitsValue(index) : key);
    position = units(text.slice(0, m.index + m[0].length));
  }
  if (position !== units(text)) throw new Error(`search path ${pyRepr(path)} is not a JSON path (at character ${position})`);
  let scope = null;
  if (segments.length && (segments[0] === "event" || segments[0] === "context")) scope = String(segments.shift());
  return { scope, segments };
}

/** search.py `SearchQuery.compile` + `_Matcher`: finds matching leaves of one node under the path. */
class Matcher {
  /** @param {Query} query @param {Segments} segments */
  constructor(query, segments) {
    const text = String(query.text);
    let re;
    try {
      re = query.regex ? pythonRegExp(text, !query.case) : literalRegExp(text, !query.case);
    } catch (error) {
      if (error instanceof PatternError) throw new Error(`search pattern ${pyRepr(text)} is not a valid regular expression: ${error.message}`);
      if (error instanceof UnsupportedPattern) throw new Error(`search pattern ${pyRepr(text)} uses ${error.message}, which this static page cannot run; search it in the notebook`);
      throw error;
    }
    this.re = re;
    this.segments = segments;
    this.case = !!query.case;
    const needle = this.case ? text : text.toLowerCase();
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the point: JSON escapes control characters (and " \), so a needle holding one cannot be found as plain text in the JSON
    const plain = !query.regex && !/["\\]/.test(needle) && !/[\u0000-\u001f]/.test(needle);
    this.needle = plain ? needle : null;
  }

  /** UTF-16 index of the first match in `text`, or -1 @param {string} text */
  find(text) {
    const m = this.re.exec(text);
    return m === null ? -1 : m.index;
  }

  /** The blob prefilter (search.py `_Matcher.maybe`): a plain needle must appear in the value's JSON.
   *  @param {TreeNode} node */
  maybe(node) {
    if (this.needle === null) return true;
    let blob;
    if (typeof node === "string") blob = this.case ? jsonString(node) : jsonString(node).toLowerCase();
    else blob = this.case ? blobOf(node) : lowerBlob(node);
    return blob === null || blob.includes(this.needle);
  }

  /** [paths, excerpt] or null @param {TreeNode} node @param {string} root @returns {[string[], string] | null} */
  hits(node, root) {
    if (!this.maybe(node)) return null;
    /** @type {string[]} */
    const paths = [];
    let text = "";
    for (const [base, selected] of select(node, this.segments, 0, root, [])) {
      for (const [path, leaf] of leaves(selected, base, [])) {
        const at = this.find(leaf);
        if (at >= 0) {
          if (!paths.length) text = excerpt(leaf, at);
          paths.push(path);
          if (paths.length >= PATHS_PER_HIT) return [paths, text];
        }
      }
    }
    return paths.length ? [paths, text] : null;
  }
}

/** search.py `_ContextMatcher.hits`: a context searched key by key (or whole, under a path).
 *  @param {Matcher} matcher @param {TreeNode} node @returns {[string[], string] | null} */
function contextHits(matcher, node) {
  if (matcher.segments.length || !isMap(node)) return matcher.hits(node, "context");
  /** @type {string[]} */
  const paths = [];
  let text = "";
  for (let k = firstChild(node); k < node.length; k += 2) {
    const found = matcher.hits(node[k + 1], `context.${keyText(node[k])}`);
    if (found !== null) {
      if (!paths.length) text = found[1];
      paths.push(...found[0]);
    }
  }
  return paths.length ? [paths.slice(0, PATHS_PER_HIT), text] : null;
}

/** search.py `_entry_hits`: the event's leaves; without a path also the entry's id and causation id.
 *  @param {Matcher} matcher @param {NonNullable<SearchCorpus["events"]>[number]} row @param {boolean} wholeEntry */
function entryHits(matcher, row, wholeEntry) {
  let found = matcher.hits(row[2], "event");
  if (wholeEntry && matcher.segments.length === 0) {
    for (const [key, node] of /** @type {Array<[string, TreeNode]>} */ ([["id", row[0]], ["causationId", row[1]]])) {
      if (typeof node === "string") {
        const at = matcher.find(node);
        if (at >= 0) found = found !== null ? [[...found[0], key], found[1]] : [[key], excerpt(node, at)];
      }
    }
  }
  return found;
}

/** @param {TreeNode} node  an event @returns {string | null | undefined} its type; undefined when not a string */
function eventType(node) {
  if (!isMap(node)) return null;
  for (let k = firstChild(node); k < node.length; k += 2) if (node[k] === "type") return typeof node[k + 1] === "string" ? node[k + 1] : undefined;
  return null;
}

/** @param {string[]} a @param {string[]} b */
const sameText = (a, b) => a.length === b.length && a.every((x, k) => x === b[k]);

/**
 * Every hit of `query` ({text, regex, path, scope, case, type}) in the exported window, in index order, as
 * `search_log` returns them for the same indices (`SearchHit.to_json()` shapes). Throws Error(message) where
 * Python raises AgentError.
 * @param {SearchCorpus} corpus @param {Query} query @returns {import("./protocol").SearchHitView[]}
 */
export function searchCorpus(corpus, query) {
  const path = query.path || "";
  const { scope, segments } = path ? parsePath(path) : { scope: null, segments: [] };
  const where = query.scope || "both";
  if (!["events", "context", "both"].includes(where)) throw new Error(`search scope must be 'events', 'context' or 'both', not ${pyRepr(String(where))}`);
  const wantEvents = (where === "events" || where === "both") && (scope === null || scope === "event");
  const contexts = corpus.contexts || null;
  const wantContext = (where === "context" || where === "both") && (scope === null || scope === "context") && contexts !== null;
  const matcher = new Matcher(query, segments);
  const typeFilter = query.type || null;
  const start = corpus.start || 0;
  const events = corpus.events || [];
  /** @type {FoundHit[]} */
  const hits = [];
  /** @type {FoundHit | null} the context hit running on while its paths and text stay the same */
  let open = null;
  let run = 0;
  for (let k = 0; k < events.length; k++) {
    const i = start + k;
    const row = events[k];
    if (wantEvents && (typeFilter === null || eventType(row[2]) === typeFilter)) {
      const found = entryHits(matcher, row, scope === null);
      if (found !== null) hits.push({ index: i, where: "event", path: found[0][0] ?? "", paths: found[0], text: found[1], until: i });
    }
    if (wantContext && contexts !== null) { // (wantContext implies contexts)
      if (run < contexts.length && contexts[run][0] === i) {
        const [, node, unsearched] = contexts[run];
        run += 1;
        const found = unsearched ? null : contextHits(matcher, node);
        if (unsearched) {
          if (open !== null) open.until = i;
        } else if (found === null) open = null;
        else if (open !== null && sameText(open.paths, found[0]) && open.text === found[1]) open.until = i;
        else {
          open = { index: i, where: "context", path: found[0][0] ?? "", paths: found[0], text: found[1], until: i };
          hits.push(open);
        }
      } else if (open !== null) open.until = i; // the same context object: its hit runs on
    }
  }
  return hits.map(({ index, where: w, path: p, text, until }) => ({ index, where: w, path: p, text, until }));
}

/** search.py `search_page`: one page of hits (the `search_results` traitlet without marks). */
/** @param {import("./protocol").SearchHitView[]} hits @param {import("./protocol").SearchQueryView} query @param {number} [offset] @param {string | null} [error] */
export function searchPage(hits, query, offset = 0, error = null) {
  const at = Math.max(0, Math.min(Math.trunc(Number(offset) || 0), Math.max(0, hits.length - 1)));
  return {
    query: { text: query.text, regex: !!query.regex, path: query.path || "", scope: query.scope || "both", case: !!query.case, type: query.type || "" },
    total: hits.length,
    offset: at,
    limit: PAGE,
    hits: hits.slice(at, at + PAGE),
    error,
  };
}

/** search.py `hit_marks`: hit starts for the slider track, evenly thinned past the cap.
 *  @param {import("./protocol").SearchHitView[]} hits @param {number} [cap] */
export function hitMarks(hits, cap = MARKS_CAP) {
  return thin([...new Set(hits.map((hit) => hit.index))].sort((a, b) => a - b), cap);
}

/** search.py `thin`: at most `cap` of `indices`, evenly spread.
 * @param {number[]} indices @param {number} cap */
export function thin(indices, cap = MARKS_CAP) {
  if (indices.length <= cap) return indices;
  const step = indices.length / cap;
  return Array.from({ length: cap }, (_, k) => indices[Math.floor(k * step)]);
}

/** search.py `hit_ranges`: the hits that span indices, drawn as bars.
 *  @param {import("./protocol").SearchHitView[]} hits @param {number} [cap] */
export function hitRanges(hits, cap = RANGES_CAP) {
  return hits.filter((hit) => hit.until > hit.index).slice(0, cap).map((hit) => [hit.index, hit.until]);
}

/** The event table's filter (table.py `EventTable.matches`): indices passing the type and the text.
 *  @param {SearchCorpus} corpus @param {Array<{type: string}>} rows  the window's table rows
 *  @param {string | null | undefined} typeFilter @param {string | null | undefined} text */
export function tableMatches(corpus, rows, typeFilter, text) {
  const needle = pyStrip(String(text || "")).toLowerCase();
  const start = corpus.start || 0;
  /** @type {number[]} */
  const out = [];
  (corpus.events || []).forEach((row, k) => {
    if (typeFilter && rows[k]?.type !== typeFilter) return;
    if (needle) {
      let hay = row[3];
      if (hay === undefined) {
        const parts = [blobOf(row[0], 1), blobOf(row[1], 1), blobOf(row[2], 1)];
        hay = parts.includes(null) ? "" : `[${parts.join(",")}]`;
      }
      if (!hay.toLowerCase().includes(needle)) return;
    }
    out.push(start + k);
  });
  return out;
}
