"""Log loading benchmark: read_log / iter_log on 100k- and 1M-entry JSONL files vs pandas.read_json.

Writes agent-like logs (init, asks, usage records, model completions with text, approvals; every
entry with a stateHash; ~355 bytes a line) with write_log, then loads each file in a fresh
subprocess per reader, so the peak RSS (VmHWM) belongs to that reader alone:

- read_log:  validated entries as a list of dicts (what the explorer and replay use)
- iter_log:  validated entries streamed and dropped (peak = one line + the id set)
- pandas:    pandas.read_json(path, lines=True) (no validation; a DataFrame of nested objects)
- baseline:  a subprocess that only imports the package and pandas (subtract it)

    .venv/bin/python benchmarks/log_loading.py [--sizes 100000 1000000] [--repeat 1] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

READERS = ("baseline", "read_log", "iter_log", "pandas")


def agent_entries(count: int) -> Iterator[dict[str, Any]]:
    """A deterministic agent-like log of `count` entries (streamed: 1M entries never in memory)."""
    from agent_explorer.canonical.jcs import state_hash

    yield {
        "schemaVersion": 1,
        "id": "e0",
        "index": 0,
        "recordedAt": "2026-01-01T00:00:00.000Z",
        "machineId": "support-agent",
        "machineVersion": "3",
        "event": {"type": "@agent.init", "input": {"customer": "cus_42", "channel": "chat"}},
        "metadata": {"executionId": "exec-benchmark"},
        "verification": {"stateHash": state_hash({"n": 0})},
    }
    hashes = [state_hash({"n": n}) for n in range(64)]  # hashing is benchmarked elsewhere
    for index in range(1, count):
        turn, step = divmod(index, 4)
        if step == 0:
            event: dict[str, Any] = {"type": "ASK", "text": f"Where is my order {turn}? It was due on Monday."}
        elif step == 1:
            event = {
                "type": "@agent.usage",
                "requestId": f"draft#{turn}",
                "model": "gpt-4o-mini" if turn % 3 else "claude-3-5-haiku",
                "usage": {"inputTokens": 812 + turn % 50, "outputTokens": 96, "totalTokens": 908 + turn % 50},
            }
        elif step == 2:
            event = {
                "type": "xstate.done.actor.draft",
                "output": {"text": f"Your order {turn} shipped yesterday; tracking 1Z{turn:08d}."},
            }
        else:
            event = {"type": "APPROVE", "by": "agent-7"}
        yield {
            "schemaVersion": 1,
            "id": f"e{index}",
            "index": index,
            "recordedAt": f"2026-01-01T{(index // 3_600_000) % 24:02d}:{(index // 60_000) % 60:02d}:"
            f"{(index // 1000) % 60:02d}.{index % 1000:03d}Z",
            "machineId": "support-agent",
            "machineVersion": "3",
            "event": event,
            "causationId": f"e{index - 1}",
            "verification": {"stateHash": hashes[index % 64]},
        }


def worker(reader: str, path: str) -> None:
    """Run one reader in this (fresh) process and print seconds, entries and peak RSS as JSON."""
    import pandas as pd  # imported by every worker, the baseline included, so RSS compares fairly

    from agent_explorer.eventlog.files import iter_log, read_log

    start = time.perf_counter()
    if reader == "read_log":
        count = len(read_log(path))
    elif reader == "iter_log":
        count = sum(1 for _ in iter_log(path))
    elif reader == "pandas":
        count = len(pd.read_json(path, lines=True))
    else:
        count = 0
    seconds = time.perf_counter() - start
    print(json.dumps({"reader": reader, "seconds": seconds, "entries": count, "peak_mib": peak_rss_mib()}))


def peak_rss_mib() -> float:
    """This process's peak resident memory since exec (VmHWM). ru_maxrss would also count the
    parent's memory inherited at fork, before exec, on Linux."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def measure(reader: str, path: Path) -> dict[str, Any]:
    completed = subprocess.run(
        [sys.executable, __file__, "--worker", reader, str(path)],
        capture_output=True, text=True, check=True,
    )
    result: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=1, help="runs per reader; the best is shown")
    parser.add_argument("--dir", type=Path, default=None, help="where to write the logs (default: a temp dir)")
    parser.add_argument("--worker", nargs=2, metavar=("READER", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker)
        return

    from agent_explorer.eventlog.files import write_log

    with tempfile.TemporaryDirectory(dir=args.dir) as scratch:
        print(f"python {sys.version.split()[0]}; best of {args.repeat}; peak RSS per fresh subprocess")
        header = (f"{'entries':>9} {'file MiB':>9} {'reader':<9} {'seconds':>8} {'entries/s':>10} "
                  f"{'peak MiB':>9} {'vs pandas':>10}")
        print(header)
        print("-" * len(header))
        for size in args.sizes:
            path = Path(scratch) / f"log-{size}.jsonl"
            start = time.perf_counter()
            write_log(path, agent_entries(size))
            written = time.perf_counter() - start
            mib = path.stat().st_size / 2**20
            results = {}
            for reader in READERS:
                runs = [measure(reader, path) for _ in range(args.repeat)]
                results[reader] = min(runs, key=lambda r: r["seconds"])
            pandas_rate = size / results["pandas"]["seconds"]
            for reader in READERS:
                r = results[reader]
                if reader == "baseline":
                    print(f"{size:>9,} {mib:>9.1f} {reader:<9} {'':>8} {'':>10} {r['peak_mib']:>9.0f}")
                    continue
                rate = r["entries"] / r["seconds"]
                print(f"{size:>9,} {mib:>9.1f} {reader:<9} {r['seconds']:>8.2f} {rate:>10,.0f} "
                      f"{r['peak_mib']:>9.0f} {rate / pandas_rate:>9.2f}x")
            print(f"{size:>9,} {mib:>9.1f} write_log {written:>8.2f} {size / written:>10,.0f}  (validated, atomic)")
            path.unlink()
        print("vs pandas = entries/s over pandas.read_json(lines=True) entries/s on the same file, same run")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3])
    else:
        main()
