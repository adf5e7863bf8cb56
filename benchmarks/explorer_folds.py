"""How many times the explorer runs the engine: engine transitions to open a log, per +1 step, per jump.

Run: .venv/bin/python benchmarks/explorer_folds.py [--sizes 1000,100000]

Counts calls of the engine's `macrostep` (XState's algorithm name: one call per transition, initial ones
included) in every thread, while an `Explorer` opens a log (until its verification has landed) and while the
cursor moves. The target of the one-fold design: opening folds the log once (one macrostep for the init entry
and one per machine event; usage entries none), a +1 step is one transition per machine event (none for a usage
entry), a cold jump at most K (the checkpoint interval) plus one. It uses only the public API, so the same
script measures an older checkout too (`PYTHONPATH=<checkout> python benchmarks/explorer_folds.py`).
"""

from __future__ import annotations

import argparse
import importlib
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "explorer"))

from sample_run import long_events, make_machine, record

from agent_explorer import Explorer, read_log
from agent_explorer.samples import support_agent

USAGE = "@agent.usage"


class Counter:
    """Counts engine macrosteps in every thread (the explorer folds long logs on a worker thread)."""

    def __init__(self) -> None:
        self.count = 0
        self._lock = threading.Lock()
        algorithm = importlib.import_module("agent_explorer.engine.algorithm")
        transition = importlib.import_module("agent_explorer.engine.transition")
        real = algorithm.macrostep

        def counting(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                self.count += 1
            return real(*args, **kwargs)

        algorithm.macrostep = counting
        transition.macrostep = counting

    def take(self) -> int:
        with self._lock:
            value, self.count = self.count, 0
        return value


def machine_events(entries: list[dict[str, Any]], start: int, stop: int) -> int:
    return sum(1 for e in entries[start:stop] if e["event"]["type"] != USAGE)


def measure(name: str, machine: Any, entries: list[dict[str, Any]], counter: Counter, rng: random.Random) -> None:
    n = len(entries)
    one_fold = 1 + machine_events(entries, 1, n)  # the init entry's initial transition, then each machine event
    counter.take()
    start = time.perf_counter()
    ex = Explorer(machine, entries)
    ex.wait_verified()
    opened = counter.take()
    seconds = time.perf_counter() - start
    print(f"\n== {name}: {n:,} entries ({one_fold:,} transitions in one fold) ==")
    print(f"  open + verify             {opened:>9,} macrosteps = {opened / one_fold:5.2f} folds   ({seconds:.2f} s)")

    ex.index = 0
    counter.take()
    steps = min(200, n - 1)
    per_type = {"machine": [0, 0], "usage": [0, 0]}
    for i in range(1, steps + 1):
        ex.index = i
        kind = "usage" if entries[i]["event"]["type"] == USAGE else "machine"
        per_type[kind][0] += 1
        per_type[kind][1] += counter.take()
    for kind, (count, calls) in per_type.items():
        if count:
            print(f"  +1 step onto a {kind:7s} entry {calls / count:9.2f} macrosteps per step ({count} steps)")
    jumps = [rng.randrange(n) for _ in range(30)]
    worst = 0
    for i in jumps:
        ex.index = i
        worst = max(worst, counter.take())
    every = getattr(getattr(getattr(ex, "line", None), "timeline", None), "checkpoint_every", None)
    print(f"  random jump (30)          {worst:>9,} macrosteps at most   (checkpoint interval K = {every})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,100000")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    counter = Counter()
    rng = random.Random(args.seed)
    measure("support_clean (sample)", support_agent, read_log(ROOT / "sample_logs" / "support_clean.jsonl"), counter, rng)
    machine = make_machine()
    for n in [int(s) for s in args.sizes.split(",") if s]:
        measure(f"sample agent run, n={n:,}", machine, record(machine, long_events(n - 1)), counter, rng)


if __name__ == "__main__":
    main()
