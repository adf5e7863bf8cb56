"""Coverage, search and static export at scale: 1k / 100k / 1M entries of the sample agent run.

Run: .venv/bin/python benchmarks/explorer_analysis.py [--sizes 1000,100000,1000000]
Prints, per size: coverage of the whole log (one traced fold) against a plain fold of the same log (the
floor: coverage costs the fold plus the trace bookkeeping); an event search (substring, regex, JSON path);
a context search (one forward walk of the checkpointed states, each distinct context searched once)
against a naive context search that serializes the context at every index; the usage ledger; the static
export (time and file size, a bounded window of 2,000 frames for big logs). Ratios are same-run.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "explorer"))

from sample_run import long_events, make_machine, record

from agent_explorer import Explorer
from agent_explorer.engine import initial_transition, transition
from agent_explorer.explorer.coverage import coverage_of


def timed(fn: Any) -> tuple[Any, float]:
    gc.collect()
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def plain_fold(machine: Any, entries: list[dict[str, Any]]) -> Any:
    snapshot, _ = initial_transition(machine)
    for entry in entries[1:]:
        if entry["event"]["type"] != "@agent.usage":
            snapshot, _ = transition(machine, snapshot, entry["event"])
    return snapshot


def naive_context_search(ex: Explorer, needle: str, limit: int) -> int:
    """What a search without the change index would do: serialize every index's context (first `limit`)."""
    hits = 0
    for i in range(min(limit, len(ex))):
        if needle in json.dumps(ex.line.timeline.state_at(i).context).lower():
            hits += 1
    return hits


def bench(n: int) -> dict[str, Any]:
    machine = make_machine()
    entries = record(machine, long_events(n - 1))
    ex = Explorer(machine, entries, verify=False)
    ex.wait_verified()
    out: dict[str, Any] = {"n": n}
    _, out["fold"] = timed(lambda: plain_fold(machine, entries))
    cov, out["coverage"] = timed(lambda: coverage_of(machine, entries))
    assert sum(cov.transitions.values()) > n // 2
    hits, out["search_events"] = timed(lambda: ex.search("hello", scope="events"))
    out["event_hits"] = len(hits)
    _, out["search_regex"] = timed(
        lambda: ex.search(r"req-\d+7$", regex=True, scope="events")
    )
    _, out["search_path"] = timed(
        lambda: ex.search("30", path="event.usage.totalTokens")
    )
    context_hits, out["search_context"] = timed(
        lambda: ex.search("hello", scope="context")
    )
    out["context_hits"] = len(context_hits)
    sample = min(n, 20_000)
    _, naive = timed(lambda: naive_context_search(ex, "hello", sample))
    out["naive_context_per_entry"] = naive / sample
    # Contexts of agent size (notes of 2 kB each, up to 10 kB): where searching each distinct context once
    # instead of every index's pays. At most 100k entries (the naive side is measured on 20k and scaled).
    size = min(n, 100_000)
    wide = record(
        machine,
        [
            {**e, "text": "x" * 2_000 + " hello"} if e["type"] == "NOTE" else e
            for e in long_events(size - 1)
        ],
    )
    wide_ex = Explorer(machine, wide, verify=False)
    wide_ex.wait_verified()
    _, wide_search = timed(lambda: wide_ex.search("hello", scope="context"))
    _, wide_naive = timed(
        lambda: naive_context_search(wide_ex, "hello", min(size, 20_000))
    )
    out["wide_n"], out["wide_search"] = size, wide_search
    out["wide_naive"] = wide_naive / min(size, 20_000) * size
    ledger, out["ledger"] = timed(lambda: ex.usage().to_pandas())
    assert len(ledger) == sum(
        1 for e in entries if e["event"]["type"] == "@agent.usage"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path, out["export"] = timed(lambda: ex.to_html(Path(tmp) / "x.html"))
        out["export_mb"] = path.stat().st_size / 1e6
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,100000,1000000")
    args = parser.parse_args()
    rows = [bench(int(n)) for n in args.sizes.split(",")]
    print(
        f"{'entries':>10} {'fold':>8} {'coverage':>9} {'search ev':>9} {'regex':>8} {'path':>8} "
        f"{'context':>8} {'ctx hits':>8} {'naive ctx (est)':>15} {'ledger':>8} {'export':>8} {'MB':>5}"
    )
    for r in rows:
        naive_total = r["naive_context_per_entry"] * r["n"]
        print(
            f"{r['n']:>10,} {r['fold']:7.2f}s {r['coverage']:8.2f}s {r['search_events']:8.2f}s {r['search_regex']:7.2f}s "
            f"{r['search_path']:7.2f}s {r['search_context']:7.2f}s {r['context_hits']:>8,} {naive_total:14.2f}s "
            f"{r['ledger']:7.2f}s {r['export']:7.2f}s {r['export_mb']:5.1f}"
        )
    for r in rows:
        print(
            f"n={r['n']:,}: coverage / plain fold = {r['coverage'] / r['fold']:.2f}x; "
            f"naive context search (every index serialized) / change-indexed = "
            f"{r['naive_context_per_entry'] * r['n'] / r['search_context']:.1f}x; with 10 kB contexts "
            f"({r['wide_n']:,} entries): {r['wide_search']:.2f}s vs naive {r['wide_naive']:.2f}s = "
            f"{r['wide_naive'] / r['wide_search']:.1f}x"
        )


if __name__ == "__main__":
    main()
