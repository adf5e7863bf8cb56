"""Replay benchmark: verify a 1,000,000-entry log, and jump around it with a Timeline.

Prints (all measured in this run, on the same log):
- recording rate (live fold + hash + entry building), for scale;
- `replay(verify=True)` and `verify_log` rate (entries/s) and the extra memory they allocate
  (tracemalloc peak, measured in a second pass since tracing slows the fold), plus process RSS;
- optionally (`--stream`) the peak RSS of a fresh process verifying the JSONL file streamed with
  `iter_log` (constant memory) and fully loaded with `read_log`;
- Timeline build time (eager checkpoint fold), checkpoint count and bytes;
- random `state_at(i)` jumps: median / p95 / max latency, against the naive baseline
  `replay(machine, entries[:i + 1], verify=False)` (refold from 0) on a few of the same indices;
- sequential scrubbing: mean latency of one step forward and back.

    .venv/bin/python benchmarks/replay.py                 # --entries N --jumps J --naive K --stream

Target (issue 4): p95 jump < 50 ms on a 1,000,000-entry log on this 2-core machine.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent_explorer.engine import initial_transition, transition  # noqa: E402
from agent_explorer.eventlog import files  # noqa: E402
from agent_explorer.eventlog.entries import create_replay_entry, init_entry  # noqa: E402
from agent_explorer.eventlog.replay import replay  # noqa: E402
from agent_explorer.eventlog.timeline import Timeline  # noqa: E402
from agent_explorer.eventlog.verification import verify_log  # noqa: E402
from tests.replay.machines import (  # noqa: E402
    APPROVE,
    CANCEL,
    REJECT,
    TIMEOUT,
    agent_machine,
    ask,
    draft_failed,
    drafted,
    fixed_clock,
    looked_up,
    usage,
)


def turn_events(turn: int) -> list[dict[str, Any]]:
    """One host turn with some variety: rejections, errors, cancels, timeouts, usage records."""
    kind = turn % 7
    events: list[dict[str, Any]] = [ask(f"question {turn}"), usage(10 + turn % 50)]
    if kind == 3:
        return [*events, draft_failed("rate limited")]
    if kind == 5:
        return [*events, CANCEL]
    events.append(drafted(f"draft {turn}"))
    if kind == 1:
        events += [REJECT, usage(12), drafted(f"redraft {turn}")]
    if kind == 6:
        return [*events, TIMEOUT]
    return [*events, APPROVE, looked_up({"turn": turn, "rows": turn % 5})]


def build_log(machine: Any, size: int) -> list[dict[str, Any]]:
    clock = fixed_clock()
    entries = [init_entry(machine, input={"question": "benchmark"}, now=clock, id="e0")]
    snapshot, _ = initial_transition(machine, input={"question": "benchmark"})
    turn = 0
    while len(entries) < size:
        for event in turn_events(turn):
            if len(entries) >= size:
                break
            if event["type"] != "@agent.usage":
                snapshot, _ = transition(machine, snapshot, event)
            entries.append(create_replay_entry(machine, event, len(entries), snapshot_after=snapshot,
                                               now=clock, id=f"e{len(entries)}"))
        turn += 1
    return entries


def timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def traced_peak(fn: Any) -> int:
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


STREAM_CHILD = """
import sys, time
sys.path.insert(0, {root!r})
from agent_explorer.eventlog import files
from agent_explorer.eventlog.verification import verify_log
from tests.replay.machines import agent_machine
mode, path = sys.argv[1], sys.argv[2]
start = time.perf_counter()
entries = files.iter_log(path) if mode == "stream" else files.read_log(path)
report = verify_log(agent_machine(), entries)
elapsed = time.perf_counter() - start
# VmHWM, not ru_maxrss: Linux carries the forking parent's peak over exec into ru_maxrss.
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(report.ok, report.entries, elapsed, peak / 1024)
"""


def stream_figures(entries: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.jsonl"
        seconds, _ = timed(lambda: files.write_log(path, entries))
        print(f"write_log: {path.stat().st_size / 1e6:,.0f} MB in {seconds:.1f} s")
        for mode in ("stream", "load"):
            out = subprocess.run(
                [sys.executable, "-c", STREAM_CHILD.format(root=str(ROOT)), mode, str(path)],
                capture_output=True, text=True, check=True,
            ).stdout.split()
            ok, count, elapsed, peak = out[0], int(out[1]), float(out[2]), float(out[3])
            label = "iter_log (streamed)" if mode == "stream" else "read_log (loaded) "
            print(f"verify_log from file, {label}: ok={ok} {count:,} entries in {elapsed:.1f} s "
                  f"({count / elapsed:,.0f} entries/s incl. parsing), peak RSS {peak:,.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--jumps", type=int, default=300)
    parser.add_argument("--naive", type=int, default=5, help="naive refold-from-0 samples")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--stream", action="store_true", help="also verify from a JSONL file in a child process")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object at the end")
    args = parser.parse_args()
    machine = agent_machine()
    figures: dict[str, Any] = {"entries": args.entries}

    seconds, entries = timed(lambda: build_log(machine, args.entries))
    rate = len(entries) / seconds
    print(f"recorded {len(entries):,} entries in {seconds:.1f} s ({rate:,.0f}/s: live fold + hash + entry)")
    print(f"process RSS after recording: {rss_mb():,.0f} MB")

    seconds, result = timed(lambda: replay(machine, entries, verify=True))
    assert result.checked == len(entries)
    figures["replay_verify_per_s"] = len(entries) / seconds
    print(f"replay(verify=True): {seconds:.1f} s, {figures['replay_verify_per_s']:,.0f} entries/s")
    seconds, _ = timed(lambda: replay(machine, entries, verify=False))
    figures["replay_fold_per_s"] = len(entries) / seconds
    print(f"replay(verify=False): {seconds:.1f} s, {figures['replay_fold_per_s']:,.0f} entries/s")
    seconds, report = timed(lambda: verify_log(machine, entries))
    assert report.ok, str(report)
    figures["verify_log_per_s"] = len(entries) / seconds
    print(f"verify_log: {seconds:.1f} s, {figures['verify_log_per_s']:,.0f} entries/s ({report})")
    # Tracing slows the fold ~3x, and a streaming fold's extra memory does not grow with the log,
    # so the traced pass runs over a prefix (up to 100,000 entries).
    prefix = entries[:100_000]
    peak = traced_peak(lambda: verify_log(machine, prefix))
    figures["verify_log_extra_peak_kb"] = peak / 1024
    print(f"verify_log extra memory over {len(prefix):,} entries (tracemalloc peak, log already loaded): "
          f"{peak / 1024:,.0f} KB")
    print(f"process peak RSS so far: {rss_mb():,.0f} MB")
    if args.stream:
        stream_figures(entries)

    seconds, timeline = timed(lambda: Timeline(machine, entries))
    checkpoint_bytes = sum(len(blob) for blob in timeline._checkpoints)
    figures["timeline_build_s"] = seconds
    print(f"Timeline build: {seconds:.1f} s, K={timeline.checkpoint_every}, {timeline.checkpoint_count:,} "
          f"checkpoints, {checkpoint_bytes / 1e6:.1f} MB of checkpoint JSON")

    rng = random.Random(args.seed)
    indices = [rng.randrange(len(entries)) for _ in range(args.jumps)]
    jumps = []
    for index in indices:
        seconds, _ = timed(lambda index=index: timeline.state_at(index))
        jumps.append(seconds * 1000)
    figures["jump_median_ms"] = statistics.median(jumps)
    figures["jump_p95_ms"] = percentile(jumps, 0.95)
    print(f"random state_at jumps ({len(jumps)}): median {figures['jump_median_ms']:.2f} ms, "
          f"p95 {figures['jump_p95_ms']:.2f} ms, max {max(jumps):.2f} ms")
    cold = []
    for index in indices[: min(100, len(indices))]:
        seconds, _ = timed(lambda index=index: timeline.persisted_at(index))
        cold.append(seconds * 1000)
    print(f"persisted_at at random indices (a jump + get_persisted_snapshot): median {statistics.median(cold):.2f} ms")

    naive = []
    for index in indices[: args.naive]:
        seconds, folded = timed(lambda index=index: replay(machine, entries[: index + 1], verify=False))
        assert folded.persisted_snapshot == timeline.persisted_at(index)
        naive.append(seconds * 1000)
    figures["naive_median_ms"] = statistics.median(naive)
    same = [jumps[i] for i in range(len(naive))]
    print(f"naive refold from 0 on the first {len(naive)} of those indices: median "
          f"{figures['naive_median_ms']:,.0f} ms (Timeline on the same: median {statistics.median(same):.2f} ms; "
          f"{figures['naive_median_ms'] / statistics.median(same):,.0f}x faster)")

    start = len(entries) // 2 + 17
    timeline.state_at(start)
    seconds, _ = timed(lambda: [timeline.state_at(i) for i in range(start + 1, start + 1001)])
    forward = seconds
    seconds, _ = timed(lambda: [timeline.state_at(i) for i in range(start + 999, start - 1, -1)])
    figures["scrub_step_us"] = (forward + seconds) / 2000 * 1e6
    print(f"sequential scrubbing: {forward / 1000 * 1e6:.0f} us/step forward, {seconds / 1000 * 1e6:.0f} us/step back")
    target = "MET" if figures["jump_p95_ms"] < 50 else "MISSED"
    print(f"target p95 jump < 50 ms: {target}")
    if args.json:
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
