// A collapsible JSON tree (native <details>), values drawn as text; paths that changed since the previous
// index carry `changed` (and their ancestors `changed-within`) so the eye finds them at once.

import { h } from "./dom.js";

const NODE_BUDGET = 3000; // stop drawing past this many nodes; Python holds the full value

/** @typedef {Array<string | number>} Path  a value's place: object keys and array indices from the root */

/**
 * @typedef {object} TreeContext  what every node of one tree shares
 * @property {Set<string>} exact  keys of the paths that changed
 * @property {Set<string>} within  keys of their ancestors
 * @property {number} openDepth
 * @property {{budget: number}} state  nodes left to draw
 * @property {Map<string, boolean> | null} remembered
 */

/** @param {Path} path */
function key(path) {
  return JSON.stringify(path);
}

/** `changed` is a list of paths (segment lists) relative to the persisted snapshot, e.g. ["context","n"]. */
/**
 * @param {unknown} value
 * @param {{ rootPath?: Path, changed?: Path[], openDepth?: number, remembered?: Map<string, boolean> | null }} [options]
 */
export function jsonTree(value, { rootPath = [], changed = [], openDepth = 2, remembered = null } = {}) {
  const exact = new Set();
  const within = new Set();
  for (const path of changed || []) {
    if (!Array.isArray(path)) continue;
    exact.add(key(path));
    for (let i = 0; i < path.length; i++) within.add(key(path.slice(0, i)));
  }
  const state = { budget: NODE_BUDGET };
  // `remembered` (a Map path -> open) keeps what the user folded or unfolded across frames.
  return h("div", { class: "ae-json", role: "tree" }, node(value, rootPath, null, 0, { exact, within, openDepth, state, remembered }));
}

/** @param {unknown} value  null or a primitive */
function leaf(value) {
  if (value === null) return h("span", { class: "ae-j-null" }, "null");
  switch (typeof value) {
    case "string":
      return h("span", { class: "ae-j-str" }, JSON.stringify(value));
    case "number":
      return h("span", { class: "ae-j-num" }, String(value));
    case "boolean":
      return h("span", { class: "ae-j-bool" }, String(value));
    default:
      return h("span", {}, String(value));
  }
}

/**
 * @param {unknown} value @param {Path} path @param {string | number | null} label  null at the root
 * @param {number} depth @param {TreeContext} ctx
 * @returns {HTMLElement}
 */
function node(value, path, label, depth, ctx) {
  ctx.state.budget -= 1;
  const k = key(path);
  const cls = ["ae-j-item"];
  if (ctx.exact.has(k)) cls.push("changed");
  else if (ctx.within.has(k)) cls.push("changed-within");
  const labelEl = label === null ? null : h("span", { class: "ae-j-key" }, typeof label === "number" ? `${label}: ` : `${label}: `);
  const isArray = Array.isArray(value);
  if (value === null || typeof value !== "object") {
    return h("div", { class: cls.join(" "), dataset: { path: k } }, labelEl, leaf(value));
  }
  const entries = isArray ? value.map((v, i) => [i, v]) : Object.entries(value);
  const summary = isArray ? `[${entries.length}]` : `{${entries.length}}`;
  if (entries.length === 0) {
    return h("div", { class: cls.join(" "), dataset: { path: k } }, labelEl, h("span", { class: "ae-j-punct" }, isArray ? "[]" : "{}"));
  }
  const details = h("details", { class: cls.join(" "), dataset: { path: k } });
  const choice = ctx.remembered?.get(k);
  details.open = choice !== undefined ? choice : depth < ctx.openDepth || ctx.within.has(k);
  // Only the user's clicks are remembered (a `toggle` listener would also record our own defaults).
  const onclick = ctx.remembered ? () => ctx.remembered?.set(k, !details.open) : undefined;
  details.appendChild(h("summary", { onclick }, labelEl, h("span", { class: "ae-j-punct" }, summary)));
  const body = h("div", { class: "ae-j-body" });
  for (const [childKey, childValue] of entries) {
    if (ctx.state.budget <= 0) {
      body.appendChild(h("div", { class: "ae-muted" }, "… (more; read explorer.snapshot in Python)"));
      break;
    }
    body.appendChild(node(childValue, [...path, childKey], childKey, depth + 1, ctx));
  }
  details.appendChild(body);
  return details;
}
