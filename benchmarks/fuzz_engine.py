"""Exhaustive version of tests/engine/test_fuzz_against_xstate.py: many more random machines and
longer event runs, compared with XState 5.33.3 step by step. Prints counts and the first differences.

    .venv/bin/python benchmarks/fuzz_engine.py [--seeds 5000] [--start 0] [--events 25]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "engine"))

import test_fuzz_against_xstate as fuzz


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=5000)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--events", type=int, default=25)
    parser.add_argument("--batch", type=int, default=500)
    args = parser.parse_args()
    started = time.perf_counter()
    failures: list[str] = []
    checked = 0
    for lo in range(args.start, args.start + args.seeds, args.batch):
        seeds = range(lo, min(lo + args.batch, args.start + args.seeds))
        cases = fuzz.make_cases(seeds, args.events)
        for case, expected in zip(cases, fuzz.run_oracle(cases)):
            failures.extend(fuzz.compare_case(case, expected))
            checked += 1
    print(f"{checked} random machines x {args.events} events compared with XState in "
          f"{time.perf_counter() - started:.1f}s: {len(failures)} differing")
    for line in failures[:10]:
        print(line)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
