// @ts-check
// What every part of the front end shares: the typed model, the cursor intents, and listener bookkeeping so
// `render`'s cleanup removes every listener it added.

/**
 * @typedef {object} Context
 * @property {import("./protocol").Model} model
 * @property {() => number} last  the last index of the line on view
 * @property {(i: number) => void} setIndex  move the cursor (clamped; sent to Python)
 * @property {(name: string, fn: Listener) => void} on  listen to a model event until cleanup
 * @property {(fn: () => void) => void} cleanup  run `fn` when the view is removed
 */

/** A model event's listener, as the protocol's Model takes it (its arguments differ by event). @typedef {Parameters<import("./protocol").Model["on"]>[1]} Listener */

/**
 * @param {import("./protocol").Model} model
 * @returns {Context & {dispose: () => void}}
 */
export function createContext(model) {
  /** @type {Array<() => void>} */
  const off = [];
  const last = () => Math.max(0, (model.get("length") || 1) - 1);
  return {
    model,
    last,
    setIndex(i) {
      const next = Math.max(0, Math.min(last(), Math.round(i)));
      if (next === model.get("index")) return;
      model.set("index", next);
      model.save_changes();
    },
    on(name, fn) {
      model.on(name, fn);
      off.push(() => model.off(name, fn));
    },
    cleanup(fn) {
      off.push(fn);
    },
    dispose() {
      for (const fn of off.splice(0)) fn();
    },
  };
}
