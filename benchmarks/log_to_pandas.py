"""log_to_pandas against the hand-written comprehension it replaces (notebook 01's), in the same run.

Run: .venv/bin/python benchmarks/log_to_pandas.py [--sizes 100000,1000000]

Logs are recorded with the real engine (tests/explorer/sample_run.py: parallel states, a timer, a usage record
every 5th entry, every entry hashed). Measured, best of --rounds: the comprehension (one dict and one
pd.Timestamp per row, then set_index), log_to_pandas(entries) (the entries' columns), and with the machine
(the replayed state columns in one fold) without and with the hash check. Ratios are to the comprehension.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "explorer"))

import pandas as pd
from sample_run import long_events, make_machine, record

from agent_explorer import log_to_pandas


def comprehension(entries: list[dict[str, Any]]) -> Any:
    """What notebook 01 wrote by hand before log_to_pandas existed."""
    return pd.DataFrame(
        {
            "index": e["index"],
            "recordedAt": pd.Timestamp(e["recordedAt"]),
            "type": e["event"]["type"],
            "causationId": e.get("causationId"),
            "model": e["event"].get("model"),
            "totalTokens": e["event"].get("usage", {}).get("totalTokens"),
        }
        for e in entries
    ).set_index("index")


def best(fn: Any, rounds: int) -> float:
    out = float("inf")
    for _ in range(rounds):
        gc.collect()
        start = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    machine = make_machine()
    for n in [int(s) for s in args.sizes.split(",") if s]:
        entries = record(machine, long_events(n - 1))
        baseline = best(lambda log=entries: comprehension(log), args.rounds)
        plain = best(lambda log=entries: log_to_pandas(log), args.rounds)
        folded = best(lambda log=entries: log_to_pandas(log, machine, verify=False), 1)
        verified = best(lambda log=entries: log_to_pandas(log, machine), 1)
        print(f"\n== {n:,} entries ==")
        print(f"  notebook 01's comprehension (6 columns)   {baseline:7.2f} s   1.00x")
        print(f"  log_to_pandas(entries) (every column)      {plain:7.2f} s   {baseline / plain:5.2f}x faster")
        print(f"  + machine: state columns, one fold         {folded:7.2f} s   ({n / folded:,.0f} entries/s)")
        print(f"  + machine, verified in the same fold       {verified:7.2f} s   ({n / verified:,.0f} entries/s)")


if __name__ == "__main__":
    main()
