// @ts-check
// The state track (`state_track`, written by Python's TrackPanel from explorer/track.py): the active states of
// every index of the line on view, as a few distinct configurations and one small number per index. With it a
// slider move lights its states in the same frame as the input, without waiting for the kernel's frame (issue 23,
// frames on time: the round trip alone is ~36 ms at p95). Without it (still folding, a line not tracked yet, an
// index past its end, a static export) `activeAt` says null and the chart waits for the frame, as before.

/**
 * @typedef {object} StateTrackView
 * @property {(i: number) => string[] | null} activeAt  the active state ids at index i; null when not tracked
 */

/**
 * The binary buffer as a DataView, whatever the front end handed over (ipywidgets: a DataView; others may give
 * an ArrayBuffer or a typed array); null when it is none of those.
 * @param {unknown} codes
 * @returns {DataView | null}
 */
function asView(codes) {
  if (codes instanceof DataView) return codes;
  if (codes instanceof ArrayBuffer) return new DataView(codes);
  if (ArrayBuffer.isView(codes)) return new DataView(codes.buffer, codes.byteOffset, codes.byteLength);
  return null;
}

/**
 * @param {import("./context.js").Context} ctx
 * @returns {StateTrackView}
 */
export function mountStateTrack(ctx) {
  const { model } = ctx;
  /** @type {{view: DataView, width: number, length: number, configurations: string[][]} | null} */
  let track = null;

  function read() {
    const t = model.get("state_track");
    const view = asView(t?.codes);
    const width = t?.width === 2 ? 2 : 1;
    const configurations = t?.configurations;
    // A track whose buffer is shorter than it claims (or absent) is no track: the frame path stays.
    if (!view || !Array.isArray(configurations) || typeof t?.length !== "number" || view.byteLength < t.length * width) {
      track = null;
      return;
    }
    track = { view, width, length: t.length, configurations };
  }

  /** @param {number} i */
  function activeAt(i) {
    if (!track || !Number.isInteger(i) || i < 0 || i >= track.length || i >= (model.get("length") || 0)) return null;
    const n = track.width === 1 ? track.view.getUint8(i) : track.view.getUint16(2 * i, true);
    return track.configurations[n] ?? null;
  }

  ctx.on("change:state_track", read);
  read();
  return { activeAt };
}
