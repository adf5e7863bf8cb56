// Transport icons as inline SVG (font glyphs like ⏮ are missing from many system fonts).

import { s } from "./dom.js";

const PATHS = {
  first: "M3 2h2v12H3z M14 2v12L6 8z",
  prev: "M12 2v12L4 8z",
  play: "M4 2v12l10-6z",
  pause: "M4 2h3v12H4z M9 2h3v12H9z",
  next: "M4 2v12l8-6z",
  last: "M11 2h2v12h-2z M2 2v12l8-6z",
};

/** @param {keyof typeof PATHS} name */
export function icon(name) {
  return s("svg", { viewBox: "0 0 16 16", width: 12, height: 12, class: "ae-icon", "aria-hidden": "true" }, s("path", { d: PATHS[name] }));
}
