// @ts-check
// The cursor's controls: first / previous / play / next / last, the index slider (one index in flight while
// dragging, so the chart follows the thumb as fast as the kernel answers), playback speed, and the keyboard
// (arrows step, shift+arrows jump 10, PageUp/PageDown 100, Home/End, space plays).

import { h, replace } from "./dom.js";
import { icon } from "./icons.js";

const SPEEDS = [1, 2, 5, 10, 25, 50];
// A sent index whose frame has not come back after this long no longer holds the next one back (Python may
// leave an index unanswered, e.g. one it already had); far above a loaded kernel's round trip (~50-150 ms).
const STALL_MS = 1000;

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
  // One index in flight. A move goes to Python at once when the last one sent has been answered (its frame
  // arrived); while one is in flight, later moves replace each other and only the newest is sent when the
  // frame comes. A drag is then answered as fast as the round trip allows (a fixed throttle made every move
  // wait up to 150 ms, issue 23) and never queues a backlog of indices the thumb has already left.
  let inFlight = false;
  let sentAt = 0;
  /** @type {number | null} */
  let queued = null;
  /** A sent index not answered yet, unless the answer is overdue (then the next move goes anyway). */
  const waiting = () => inFlight && performance.now() - sentAt < STALL_MS;
  /** @param {number} i */
  const sendIndex = (i) => {
    if (waiting()) {
      queued = i;
      return;
    }
    queued = null;
    const before = model.get("index");
    setIndex(i);
    inFlight = model.get("index") !== before; // nothing is sent when the index is already there
    sentAt = performance.now();
  };
  const answered = () => {
    inFlight = false;
    if (queued === null) return;
    const i = queued;
    queued = null;
    sendIndex(i);
  };
  /** The index a slider move still waits for (queued, or sent and not answered yet); null when none is. */
  const wanted = () => {
    if (queued !== null) return queued;
    return waiting() ? model.get("index") : null;
  };
  slider.addEventListener("input", () => {
    const i = Number(slider.value);
    onScrub(i);
    sendIndex(i);
  });
  slider.addEventListener("change", () => sendIndex(Number(slider.value)));
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
  ctx.on("change:frame", answered);
  ctx.cleanup(() => {
    if (playing) clearInterval(playing);
    queued = null;
  });
  sync();
  return { el, onKey, wanted };
}
