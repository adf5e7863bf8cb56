"""Generated sample logs: what first use costs, and what every later call costs (the notebooks' first cell).

    .venv/bin/python benchmarks/samples.py [--rounds 3]

Measures, in one run, in fresh temporary folders: `ensure_samples` cold (copy the shipped logs, fold the 100,001-
entry run, write the SQLite store, export the long JSONL), `ensure_samples` warm (the stamp is current: nothing is
written), and, as the same-run baseline, the full recording `regenerate` does (every scenario through `run_agent`,
then the same generation). The three run in interleaved rounds (so a busy machine weighs on each alike), and each
figure is the best of `--rounds`.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agent_explorer.samples import ensure_samples
from agent_explorer.samples.regenerate import regenerate


def timed(run: Callable[[Path], object], folder: Path) -> float:
    started = time.perf_counter()
    run(folder)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    quiet = {"log": lambda _message: None}
    colds, warms, fulls = [], [], []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="agent-explorer-bench-") as scratch:
            first, second = Path(scratch) / "a", Path(scratch) / "b"
            colds.append(timed(lambda folder: ensure_samples(folder, **quiet), first))
            warms.append(timed(lambda folder: ensure_samples(folder, **quiet), first))
            fulls.append(timed(lambda folder: asyncio.run(regenerate(folder, **quiet)), second))
    cold, warm, full = min(colds), min(warms), min(fulls)
    print(f"{'what':<52} {'seconds':>9}")
    print(f"{'ensure_samples, first use (cold)':<52} {cold:>9.3f}")
    print(f"{'ensure_samples, stamp current (warm)':<52} {warm:>9.3f}")
    print(f"{'regenerate: record every scenario, then generate':<52} {full:>9.3f}")
    print(f"warm / cold: {warm / cold:.4f}   cold / regenerate: {cold / full:.2f}")


if __name__ == "__main__":
    main()
