"""What a cursor move costs in CPU instructions (valgrind callgrind): repeatable whatever else the machine runs.

Run: .venv/bin/python benchmarks/explorer_instructions.py [--entries 8000] [--moves 100]
     PYTHONPATH=<other checkout> .venv/bin/python benchmarks/explorer_instructions.py   # the same, for it

Wall-clock latency on a shared 2-core machine swings 2-5x with load; an instruction count does not. Each figure
is the difference of two callgrind runs of the same child process, one that opens the explorer and makes N
moves and one that makes none, divided by N: instructions per random jump and per +1 step (the frame built,
as `benchmarks/explorer.py` times it). Needs `valgrind` on PATH (Debian's package).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child(entries: int, mode: str, moves: int) -> None:
    sys.path.insert(0, str(ROOT / "tests" / "explorer"))
    from sample_run import long_events, make_machine, record

    from agent_explorer import Explorer

    machine = make_machine()
    log = record(machine, long_events(entries - 1))
    ex = Explorer(machine, log)
    ex.wait_verified()
    if mode == "jump":
        rng = random.Random(3)
        for index in [rng.randrange(len(log)) for _ in range(moves)]:
            ex.index = index
    else:
        for index in range(len(log) // 2, len(log) // 2 + moves):
            ex.index = index


def instructions(entries: int, mode: str, moves: int) -> int:
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__,
               "--child", mode, "--entries", str(entries), "--moves", str(moves)]
    out = subprocess.run(command, capture_output=True, text=True, env=os.environ, check=True)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if found is None:
        raise RuntimeError(f"callgrind printed no total:\n{out.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=8000)
    parser.add_argument("--moves", type=int, default=100)
    parser.add_argument("--child", choices=["jump", "step"])
    args = parser.parse_args()
    if args.child:
        child(args.entries, args.child, args.moves)
        return
    print(f"{args.entries:,}-entry sample run, {args.moves} moves each (callgrind instruction counts)")
    for mode in ("jump", "step"):
        base = instructions(args.entries, mode, 0)
        moved = instructions(args.entries, mode, args.moves)
        print(f"  {mode:5s} {(moved - base) / args.moves / 1e6:8.2f} M instructions per move")


if __name__ == "__main__":
    main()
