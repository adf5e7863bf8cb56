// @ts-check
// The cursor's controls: first / previous / play / next / last, the index slider (debounced while dragging,
// with a send every 150 ms so the chart follows the thumb), playback speed, and the keyboard (arrows step,
// shift+arrows jump 10, PageUp/PageDown 100, Home/End, space plays).

import { debounce, h, replace } from "./dom.js";
import { icon } from "./icons.js";

const SPEEDS = [1, 2, 5, 10, 25, 50];

/**
 * @param {import("./context.js").Context} ctx
 * @param {{track: HTMLElement, onScrub: (i: number) => void}} parts
 */
export function mountControls(ctx, { track, onScrub }) {
  const { model, setIndex, last } = ctx;
  /** @param {HTMLElement | SVGElement} label @param {string} titleText @param {() => void} fn @param {string} testid */
  const btn = (label, titleText, fn, testid) =>
    h("button", { class: "ae-btn", title: titleText, "aria-label": titleText, onclick: fn, "data-testid": testid }, label);
  /** @type {ReturnType<typeof setInterval> | null} */
  let playing = null;
  const play = btn(icon("play"), "Play / pause (space)", () => togglePlay(), "play");
  const speed = /** @type {HTMLSelectElement} */ (h("select", { class: "ae-input", title: "Playback speed (entries per second)", "aria-label": "Playback speed" }, SPEEDS.map((n) => h("option", { value: n }, `${n}/s`))));
  speed.value = "5";
  speed.addEventListener("change", () => {
    if (playing) {
      togglePlay();
      togglePlay();
    }
  });
  const slider = /** @type {HTMLInputElement} */ (h("input", { class: "ae-slider", type: "range", min: 0, max: 0, step: 1, value: 0, "aria-label": "Log index", "data-testid": "slider" }));
  const sendIndex = debounce((/** @type {number} */ i) => setIndex(i), 60);
  let lastSent = 0;
  slider.addEventListener("input", () => {
    const i = Number(slider.value);
    onScrub(i);
    const now = performance.now();
    if (now - lastSent > 150) {
      lastSent = now;
      sendIndex.cancel();
      setIndex(i);
    } else sendIndex(i);
  });
  slider.addEventListener("change", () => sendIndex.flush());
  const el = h(
    "div",
    { class: "ae-controls" },
    btn(icon("first"), "First entry (Home)", () => setIndex(0), "first"),
    btn(icon("prev"), "Previous entry (←)", () => setIndex(model.get("index") - 1), "prev"),
    play,
    btn(icon("next"), "Next entry (→)", () => setIndex(model.get("index") + 1), "next"),
    btn(icon("last"), "Last entry (End)", () => setIndex(last()), "last"),
    h("div", { class: "ae-slider-wrap" }, track, slider),
    speed,
  );

  function togglePlay() {
    if (playing) {
      clearInterval(playing);
      playing = null;
      replace(play, icon("play"));
      play.classList.remove("on");
      return;
    }
    if (model.get("index") >= last()) setIndex(0);
    replace(play, icon("pause"));
    play.classList.add("on");
    playing = setInterval(() => {
      if (model.get("index") >= last()) togglePlay();
      else setIndex(model.get("index") + 1);
    }, 1000 / Number(speed.value));
  }

  /** The slider follows the cursor (unless the user is dragging it) and the line's length. */
  function sync() {
    slider.max = String(last());
    if (document.activeElement !== slider || !slider.matches(":active")) slider.value = String(model.get("index"));
  }

  /** @param {KeyboardEvent} event */
  function onKey(event) {
    const target = event.target;
    const typing = target instanceof HTMLInputElement && target.type !== "range";
    if (typing || target instanceof HTMLSelectElement || target instanceof HTMLTextAreaElement) {
      event.stopPropagation(); // keep notebook command-mode shortcuts out of our inputs
      return;
    }
    const i = model.get("index");
    const jump = event.shiftKey ? 10 : 1;
    /** @type {Record<string, () => void>} */
    const keys = {
      ArrowRight: () => setIndex(i + jump),
      ArrowDown: () => setIndex(i + jump),
      ArrowLeft: () => setIndex(i - jump),
      ArrowUp: () => setIndex(i - jump),
      PageDown: () => setIndex(i + 100),
      PageUp: () => setIndex(i - 100),
      Home: () => setIndex(0),
      End: () => setIndex(last()),
      " ": () => togglePlay(),
    };
    const action = keys[event.key];
    if (!action || event.ctrlKey || event.metaKey || event.altKey) return;
    event.preventDefault();
    event.stopPropagation();
    action();
  }

  ctx.on("change:index", sync);
  ctx.on("change:length", sync);
  ctx.cleanup(() => {
    if (playing) clearInterval(playing);
    sendIndex.cancel();
  });
  sync();
  return { el, onKey };
}
