"""What the state track costs the fold that records it, and what it weighs on the wire (issue 23, frames on time).

Run: .venv/bin/python benchmarks/state_track.py [--entries 200000] [--rounds 5]

The Timeline records each index's configuration as its one fold goes (eventlog/configurations.py: one dict look-up
and one array append per step). On a loaded, shared machine an end-to-end open of a million entries varies by far
more than that, so this measures the two parts in one process, interleaved: the line's fold as the explorer runs
it (`open_line`: checkpoints, effect ledger, every hash checked, the track), and the track's own work over the same
steps' snapshots. Their ratio is the share the track adds. Then the payload (explorer/track.py) for the same line:
how long building it takes and its size (codes + configurations), as a traitlet sends it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "explorer"))

from sample_run import long_events, make_machine, record

from agent_explorer.eventlog.configurations import ConfigurationTrack
from agent_explorer.eventlog.fold import fold
from agent_explorer.explorer.branches import open_line
from agent_explorer.explorer.track import state_track


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.entries < 2 or args.rounds < 1:
        print("error: --entries must be at least 2 and --rounds at least 1", file=sys.stderr)
        sys.exit(2)
    machine = make_machine()
    started = time.perf_counter()
    entries = record(machine, long_events(args.entries - 1))
    print(f"recorded {len(entries):,} entries in {time.perf_counter() - started:.1f} s (load {os.getloadavg()[0]:.1f})")
    snapshots = [step.snapshot for step in fold(machine, entries, check_version=False)]
    assert len(snapshots) == len(entries), (len(snapshots), len(entries))

    folds: list[float] = []
    tracks: list[float] = []
    for _ in range(args.rounds):
        started = time.perf_counter()
        timeline = open_line(machine, entries)
        folds.append(time.perf_counter() - started)
        started = time.perf_counter()
        track = ConfigurationTrack()
        for snapshot in snapshots:
            track.add(snapshot)
        tracks.append(time.perf_counter() - started)
    fold_s, track_s = statistics.median(folds), statistics.median(tracks)
    n = len(entries)
    print(f"fold (open_line, verifying)   median {fold_s:7.3f} s   {fold_s / n * 1e6:7.2f} us/entry")
    print(f"the track's own work          median {track_s:7.3f} s   {track_s / n * 1e9:7.0f} ns/entry"
          f"   = {track_s / fold_s * 100:.2f}% of the fold")

    started = time.perf_counter()
    payload = state_track("recording", timeline, machine.definition)
    built = time.perf_counter() - started
    assert payload is not None
    names = len(json.dumps(payload["configurations"]))
    print(f"payload: {payload['length']:,} indices, {len(payload['configurations'])} configurations, "
          f"codes {len(payload['codes']):,} B ({payload['width']} B/index) + {names:,} B of ids, built in "
          f"{built * 1000:.1f} ms (load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
