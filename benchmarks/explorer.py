"""Explorer speed at scale: time to open a log, and index-change -> frame-ready latency, for 1k / 100k / 1M entries.

Run: .venv/bin/python benchmarks/explorer.py [--sizes 1000,100000,1000000] [--jumps 300]
Prints figures and same-run ratios (latency at n vs at the smallest n; refold-from-0 vs a checkpointed jump).
Logs are recorded with the real engine and log functions (tests/explorer/sample_run.py), every entry hashed.
The widget runs without a front end (no comm): the figures are the Python side of a cursor move, which is
what a slider move costs before the frame goes over the wire.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "explorer"))

from sample_run import long_events, make_machine, record

from agent_explorer import Explorer, replay


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.2f} ms"


def time_moves(ex: Explorer, indices: list[int]) -> list[float]:
    """Seconds from `ex.index = i` to the frame for i being built (synchronous outside an event loop)."""
    out = []
    for i in indices:
        start = time.perf_counter()
        ex.index = i
        out.append(time.perf_counter() - start)
        assert ex.frame["index"] == i
    return out


def bench(n: int, jumps: int, rng: random.Random) -> dict[str, Any]:
    machine = make_machine()
    start = time.perf_counter()
    entries = record(machine, long_events(n - 1))
    recorded = time.perf_counter() - start
    gc.collect()

    start = time.perf_counter()
    ex = Explorer(machine, entries)
    opened = time.perf_counter() - start
    # A user who opens the log and at once drags to the end (the checkpoint fold may not be there yet):
    # the kernel answers at once (a progress frame when the fold is behind), the real frame when reached.
    start = time.perf_counter()
    ex.index = n - 1
    first_end = time.perf_counter() - start
    while ex.frame.get("pending"):
        time.sleep(0.01)
    delivered = time.perf_counter() - start
    ex.wait_verified()
    ready = time.perf_counter() - start + opened
    assert ex.verification["status"] == "ok", ex.verification

    jumps_s = time_moves(ex, [rng.randrange(n) for _ in range(jumps)])
    base = rng.randrange(n - jumps - 1)
    steps_s = time_moves(ex, list(range(base, base + jumps)))
    frame_bytes = statistics.median(len(json.dumps(ex.frame)) for _ in range(1))
    page = len(json.dumps(ex.table))

    # The naive alternative the Timeline replaces: refold from entry 0 up to a middle index.
    middle = n // 2
    start = time.perf_counter()
    replay(machine, entries[: middle + 1], verify=False)
    refold = time.perf_counter() - start

    start = time.perf_counter()
    # The table's first text filter scans the whole log (what typing in the filter box does).
    ex._on_message(ex, {"kind": "table", "offset": 0, "limit": 100, "type": "", "text": "hello"}, [])
    hits = ex.table["total"]
    search = time.perf_counter() - start
    return {
        "n": n,
        "record_s": recorded,
        "open_s": opened,
        "first_jump_to_end_s": first_end,
        "end_frame_delivered_s": delivered,
        "ready_s": ready,
        "jump_median_s": statistics.median(jumps_s),
        "jump_p95_s": percentile(jumps_s, 0.95),
        "step_median_s": statistics.median(steps_s),
        "step_p95_s": percentile(steps_s, 0.95),
        "refold_middle_s": refold,
        "frame_bytes": frame_bytes,
        "table_page_bytes": page,
        "search_s": search,
        "search_hits": hits,
        "checkpoint_every": ex.line.timeline.checkpoint_every,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,100000,1000000")
    parser.add_argument("--jumps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    results = []
    for n in [int(s) for s in args.sizes.split(",")]:
        result = bench(n, args.jumps, rng)
        results.append(result)
        print(f"\n== {n:,} entries (checkpoint every {result['checkpoint_every']}) ==")
        print(f"  record log (not the explorer)   {result['record_s']:8.2f} s")
        print(f"  open (Explorer(...) returns)    {ms(result['open_s'])}")
        print(f"  jump to the end right after open{ms(result['first_jump_to_end_s'])}  (kernel free again)")
        print(f"    its frame delivered after     {result['end_frame_delivered_s']:8.2f} s  (fold got there)")
        print(
            f"  fully built + verified          {result['ready_s']:8.2f} s  (background thread)"
        )
        print(
            f"  random jump  median / p95       {ms(result['jump_median_s'])} / {ms(result['jump_p95_s'])}"
        )
        print(
            f"  step +1      median / p95       {ms(result['step_median_s'])} / {ms(result['step_p95_s'])}"
        )
        print(f"  refold 0..n/2 (what we avoid)   {ms(result['refold_middle_s'])}")
        print(
            f"  frame / table page JSON         {result['frame_bytes']:,} B / {result['table_page_bytes']:,} B"
        )
        print(
            f"  first text search over the log  {ms(result['search_s'])}  ({result['search_hits']:,} hits)"
        )
    small = results[0]
    print("\n== same-run ratios ==")
    for r in results:
        print(
            f"  n={r['n']:>9,}: jump p95 / jump p95 at n={small['n']:,} = "
            f"{r['jump_p95_s'] / small['jump_p95_s']:5.2f}x;  refold / median jump = "
            f"{r['refold_middle_s'] / r['jump_median_s']:9.1f}x;  open / open at n={small['n']:,} = "
            f"{r['open_s'] / small['open_s']:7.1f}x"
        )


if __name__ == "__main__":
    main()
