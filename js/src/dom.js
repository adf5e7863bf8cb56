// Tiny DOM helpers. Every piece of data becomes a Text node or an attribute value set through the DOM API:
// this front end never assigns innerHTML/outerHTML or uses insertAdjacentHTML, so payloads stay text.

const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * What `h`/`s`/`append` accept as children: nodes, text (numbers and strings become Text nodes), and nested
 * lists of them; null, undefined and false are skipped, so `cond && h(...)` can stand in a list. (The list is
 * written by its shape: a JSDoc typedef cannot refer to itself through Array<...>.)
 * @typedef {Node | string | number | boolean | null | undefined | {readonly [i: number]: Child, readonly length: number}} Child
 */

/**
 * Attributes by name: `on*` functions become listeners, `dataset` an object of data-* values, `true` an empty
 * attribute; null, undefined and false leave the attribute out. Anything else is set as its String().
 * @typedef {Record<string, unknown>} Attrs
 */

/**
 * Build an element: h("div", {class: "x", title: t, onclick: fn}, "text", childNode, [more]).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag @param {Attrs} [attrs] @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  applyAttrs(el, attrs);
  append(el, children);
  return el;
}

/**
 * Same for SVG elements (sparkline, track marks).
 * @template {keyof SVGElementTagNameMap} K
 * @param {K} tag @param {Attrs} [attrs] @param {...Child} children
 * @returns {SVGElementTagNameMap[K]}
 */
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  applyAttrs(el, attrs);
  append(el, children);
  return el;
}

/** @param {HTMLElement | SVGElement} el @param {Attrs} attrs */
function applyAttrs(el, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), /** @type {EventListener} */ (value));
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
}

/**
 * @template {Element} E
 * @param {E} el @param {Child[]} children
 * @returns {E}
 */
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/**
 * Replace all children (data as text).
 * @template {Element} E
 * @param {E} el @param {...Child} children
 * @returns {E}
 */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** Short hash for display: first 10 hex chars. @param {unknown} hash @returns {string} */
export function shortHash(hash) {
  return typeof hash === "string" ? hash.slice(0, 10) : "—";
}

/** Two hashes shown side by side: 10 hex chars each, or more, up to the first character where they differ, so a
 * mismatch never reads as two equal prefixes ("7ec686d62b ≠ 7ec686d62b").
 * @param {unknown} a @param {unknown} b @returns {[string, string]} */
export function shortHashPair(a, b) {
  if (typeof a !== "string" || typeof b !== "string") return [shortHash(a), shortHash(b)];
  let same = 0;
  while (same < a.length && same < b.length && a[same] === b[same]) same += 1;
  const shown = a === b ? 10 : Math.max(10, same + 1);
  return [a.slice(0, shown), b.slice(0, shown)];
}

/**
 * Debounce with trailing call; `.flush()` runs a pending call now, `.cancel()` drops it.
 * @template {unknown[]} A
 * @param {(...args: A) => void} fn @param {number} ms
 * @returns {Debounced<A>}
 */
export function debounce(fn, ms) {
  /** @type {ReturnType<typeof setTimeout> | null} */
  let timer = null;
  /** @type {A | null} */
  let lastArgs = null;
  const run = () => {
    timer = null;
    const args = lastArgs;
    lastArgs = null;
    if (args) fn(...args);
  };
  /** @type {Debounced<A>} */
  const wrapped = (...args) => {
    lastArgs = args;
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(run, ms);
  };
  wrapped.flush = () => {
    if (timer !== null) {
      clearTimeout(timer);
      run();
    }
  };
  wrapped.cancel = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    lastArgs = null;
  };
  return wrapped;
}

/**
 * @template {unknown[]} A
 * @typedef {((...args: A) => void) & {flush: () => void, cancel: () => void}} Debounced
 */

/** @param {unknown} n @returns {string} */
export function formatNumber(n) {
  if (typeof n !== "number") return String(n);
  return Number.isInteger(n) ? n.toLocaleString("en-US") : n.toLocaleString("en-US", { maximumFractionDigits: 4 });
}

/** A count with its noun agreeing: `plural(1, "entry", "entries")` -> "1 entry", `plural(1000, "hit")` -> "1,000 hits".
 * @param {number | undefined} n  a count a partial payload may leave out (shown as "undefined", as before)
 * @param {string} one @param {string} [many] @returns {string} */
export function plural(n, one, many = `${one}s`) {
  return `${formatNumber(n)} ${n === 1 ? one : many}`;
}

/** A recorded timestamp as a cell shows it: "2026-03-02T09:00:05.100Z" -> "03-02 09:00:05" (month-day and time as
 * recorded), or "2026-03-02 09:00:05" with `year`; the element's tooltip holds the whole timestamp, zone and
 * milliseconds included. Anything else is shown as it is.
 * @param {unknown} iso @param {{year?: boolean}} [options] @returns {string} */
export function formatRecorded(iso, { year = false } = {}) {
  if (typeof iso !== "string") return "";
  const match = /^(\d{4,})-(\d\d)-(\d\d)[T ](\d\d:\d\d:\d\d)/.exec(iso);
  if (!match) return iso;
  return `${year ? `${match[1]}-` : ""}${match[2]}-${match[3]} ${match[4]}`;
}
