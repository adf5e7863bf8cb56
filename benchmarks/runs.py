"""The run list (`summarize_runs`) beside `verify_store` on the same store and executor, and its cache.

    .venv/bin/python benchmarks/runs.py                                  # 10,000 threads, SQLite
    .venv/bin/python benchmarks/runs.py --pg "$AGENT_EXPLORER_TEST_PG_DSN" # PostgreSQL too (a throwaway schema)
    .venv/bin/python benchmarks/runs.py --threads 100000 --parts cache --fill-workers 2   # reopening at the target size

The store: N copies of the first 11 entries of sample_logs/support_clean.jsonl (every one hashed) under thread
ids t000000..; its 12th entry is what "one thread grown by one entry" appends. Generated here: t000000 appended,
then forked N-1 times through the store's own `fork` (SQLite with synchronous=NORMAL while building; PostgreSQL
four forks at a time), timed apart from the measurements. `--parts` picks what is measured, per store:
  verify_store         verify_store(url, support_agent) in-process, and on a 2-process pool;
  summary (no cache)   summarize_runs(url, support_agent, cache=False) on the same executors: ratio vs verify,
                       in wall-clock seconds and in CPU seconds (this process and the pool's workers);
  first (cache cold)   summarize_runs with the per-user cache (a fresh folder), which it fills;
  reopen unchanged     the same call again: entries folded (must be 0) and seconds;
  grown by one         after appending one entry to one thread: entries folded (must be 1) and seconds;
  summaries memory     tracemalloc of the RunSummaries object (N rows), and its projection to 100,000.
Figures are the best of the rounds (noise only slows a round down on a shared machine). `uptime` is printed
before and after. `--fill-workers N` fills the cache (the first look) on an N-process pool (100,000 threads take
minutes in-process); reopening is always measured in-process, where it runs whatever the executor.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import functools
import gc
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fleet import pids_cpu, process_cpu

from agent_explorer import SqliteEventLogStore, summarize_runs, verify_store
from agent_explorer.samples import support_agent
from agent_explorer.stores.urls import open_store

ROOT = Path(__file__).resolve().parents[1]
GOAL_RATIO = 1.2


def texts() -> list[str]:
    return (ROOT / "sample_logs" / "support_clean.jsonl").read_text(encoding="utf-8").splitlines()


async def build(store: Any, threads: int) -> float:
    """N threads of the same 11 entries (t000000 appended, the rest forked from it); seconds taken."""
    started = time.perf_counter()
    await store.append(thread_id="t000000", expected_index=0, entries=texts()[:11])
    gate = asyncio.Semaphore(4)

    async def fork(n: int) -> None:
        async with gate:
            await store.fork(thread_id="t000000", new_thread_id=f"t{n:06d}", up_to_index=11)

    for start in range(1, threads, 5000):
        await asyncio.gather(*(fork(n) for n in range(start, min(threads, start + 5000))))
    return time.perf_counter() - started


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


async def grow(url: str) -> str:
    """Append the 12th entry to the first thread that has 11 (a kept schema may have grown one already)."""
    store = open_store(url)
    try:
        for n in range(7, 100):
            thread_id = f"t{n:06d}"
            if await store.length(thread_id) == 11:
                await store.append(thread_id=thread_id, expected_index=11, entries=[texts()[11]])
                return thread_id
        raise SystemExit("no thread of 11 entries left to grow")
    finally:
        await store.aclose()


def cpu_seconds() -> float:
    """CPU seconds of this process and its live descendants (the pool's workers): on a shared machine the
    wall-clock ratio swings with the neighbours' load, the CPU one much less. The database server's CPU is not
    counted (both calls read the same rows). fleet.py's readers of /proc; psutil is no dependency of this project."""
    return process_cpu() + pids_cpu(_descendants(os.getpid()))


def _descendants(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = [], [root]
    while frontier:
        children = [pid for pid, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def best(run: Callable[[], Any], rounds: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return min(times), result


def cold_summary(url: str, executor: Any) -> Any:
    """summarize_runs with the cache on, in a fresh cache folder: the first look at a store."""
    folder = tempfile.mkdtemp(prefix="runs-cache-")
    os.environ["AGENT_EXPLORER_CACHE_DIR"] = folder
    try:
        return summarize_runs(url, support_agent, executor=executor)
    finally:
        os.environ.pop("AGENT_EXPLORER_CACHE_DIR", None)
        shutil.rmtree(folder, ignore_errors=True)


def measure(name: str, url: str, threads: int, rounds: int, parts: set[str], fill_workers: int) -> None:
    print(f"\n{name}, {threads:,} threads x 11 entries")
    pool = concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"))
    try:
        warm = [f"t{n:06d}" for n in range(8)]
        verify_store(url, support_agent, executor=pool, threads=warm, batch_size=2)
        summarize_runs(url, support_agent, executor=pool, threads=warm, batch_size=2, cache=False)
        if "ratio" in parts:
            ratios(url, threads, rounds, pool)
        if "cache" in parts:
            reopening(url, rounds, pool if fill_workers else None)
        if "memory" in parts:
            memory(url)
    finally:
        pool.shutdown()


def ratios(url: str, threads: int, rounds: int, pool: Any) -> None:
    """verify_store, summarize_runs(cache=False) and a cold-cache summary, interleaved; the ratios to verify."""
    print(f"| {'executor':<12} | {'verify_store s':>14} | {'summary s':>9} | {'ratio':>6} | "
          f"{'summary, cache cold s':>21} | {'ratio':>6} | {'CPU s verify / summary / cold':>29} | "
          f"{'CPU ratios':>11} | goal |")
    print(f"|{'-' * 14}|{'-' * 16}:|{'-' * 11}:|{'-' * 8}:|{'-' * 23}:|{'-' * 8}:|{'-' * 31}:|{'-' * 13}:|-----:|")
    for label, executor in (("in-process", None), ("2 processes", pool)):
        # Interleaved rounds: the three see the same machine load.
        verify_run = functools.partial(verify_store, url, support_agent, executor=executor)
        summary_run = functools.partial(summarize_runs, url, support_agent, executor=executor, cache=False)
        cold_run = functools.partial(cold_summary, url, executor)
        found: dict[str, list[float]] = {"verify": [], "summary": [], "cold": []}
        cpu: dict[str, list[float]] = {"verify": [], "summary": [], "cold": []}
        for _ in range(rounds):
            for key, run in (("verify", verify_run), ("summary", summary_run), ("cold", cold_run)):
                used = cpu_seconds()
                seconds, result = best(run, 1)
                cpu[key].append(cpu_seconds() - used)
                found[key].append(seconds)
                if key == "verify":
                    assert result.threads_checked == threads and result.ok
                else:
                    assert len(result) == threads and result.counts()["unreadable"] == 0
        v, s, c = (min(found[key]) for key in ("verify", "summary", "cold"))
        cv, cs, cc = (min(cpu[key]) for key in ("verify", "summary", "cold"))
        print(f"| {label:<12} | {v:>14.3f} | {s:>9.3f} | {s / v:>5.2f}x | {c:>21.3f} | {c / v:>5.2f}x | "
              f"{f'{cv:.2f} / {cs:.2f} / {cc:.2f}':>29} | {f'{cs / cv:.2f}x {cc / cv:.2f}x':>11} | {GOAL_RATIO}x |")


def reopening(url: str, rounds: int, fill: Any) -> None:
    """The cache: a first look (filling it), reopening unchanged, then one thread grown by one entry."""
    cache = tempfile.mkdtemp(prefix="runs-cache-")
    os.environ["AGENT_EXPLORER_CACHE_DIR"] = cache
    try:
        first, cold = best(lambda: summarize_runs(url, support_agent, executor=fill), 1)
        times: list[tuple[float, float]] = []
        for _ in range(rounds):  # wall and CPU seconds of each round (this process: a reopen runs here)
            used = time.process_time()
            reopen, hit = best(lambda: summarize_runs(url, support_agent), 1)
            times.append((reopen, time.process_time() - used))
        reopen, reopen_cpu = min(times)
        asyncio.run(grow(url))
        used = time.process_time()
        grown_s, grown = best(lambda: summarize_runs(url, support_agent), 1)
        grown_cpu = time.process_time() - used
        where = "in-process" if fill is None else "on the pool"
        print(f"first (cache cold, {where}): {first:.3f} s, {cold.folded:,} entries folded")
        print(f"reopen unchanged:   {reopen:.3f} s ({reopen_cpu:.3f} s CPU), {hit.folded:,} entries folded, "
              f"{hit.cached:,} rows from the cache")
        print(f"grown by one entry: {grown_s:.3f} s ({grown_cpu:.3f} s CPU), {grown.folded:,} entries folded, "
              f"{grown.cached:,} rows from the cache")
        assert hit.folded == 0 and grown.folded == 1, (hit.folded, grown.folded)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        os.environ.pop("AGENT_EXPLORER_CACHE_DIR", None)


def memory(url: str) -> None:
    """tracemalloc of the RunSummaries object."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    kept = summarize_runs(url, support_agent, cache=False)
    gc.collect()
    size = sum(stat.size for stat in tracemalloc.take_snapshot().compare_to(before, "filename"))
    tracemalloc.stop()
    per_row = size / len(kept)
    print(f"summaries memory:   {size / 2**20:.1f} MiB for {len(kept):,} rows ({per_row:,.0f} B/row; "
          f"{per_row * 100_000 / 2**20:.0f} MiB projected for 100,000)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--pg", metavar="DSN", default=None)
    parser.add_argument("--parts", default="ratio,cache,memory", help="comma-separated: ratio, cache, memory")
    parser.add_argument("--fill-workers", type=int, default=0, help="processes that fill the cache (0: in-process)")
    parser.add_argument("--no-sqlite", action="store_true", help="PostgreSQL only")
    parser.add_argument("--pg-schema", default=None,
                        help="a schema to generate once and keep (reused when it holds --threads threads)")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    print(f"uptime before: {uptime()}")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "runs.db"

        async def fill_sqlite() -> float:
            store = SqliteEventLogStore(path, synchronous="NORMAL")
            try:
                return await build(store, args.threads)
            finally:
                await store.aclose()

        if not args.no_sqlite:
            print(f"SQLite store generated in {asyncio.run(fill_sqlite()):.1f} s")
            measure("SQLite file", f"sqlite:///{path}", args.threads, args.rounds, parts, args.fill_workers)
    if args.pg:
        schema = args.pg_schema or f"bench_runs_{uuid.uuid4().hex[:10]}"
        url = f"{args.pg}{'&' if '?' in args.pg else '?'}schema={schema}"

        async def fill_pg() -> float | None:
            store = open_store(url)
            try:
                if args.pg_schema and len(await store.list_threads(limit=args.threads + 1)) == args.threads:
                    return None  # generated by an earlier run and kept (--pg-schema): reused as it is
                return await build(store, args.threads)
            finally:
                await store.aclose()

        seconds = asyncio.run(fill_pg())
        print(f"PostgreSQL store {'reused' if seconds is None else f'generated in {seconds:.1f} s'} (schema {schema})")
        try:
            measure("PostgreSQL", url, args.threads, args.rounds, parts, args.fill_workers)
        finally:
            if not args.pg_schema:
                import psycopg

                with psycopg.connect(args.pg, autocommit=True) as conn:
                    conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    print(f"uptime after: {uptime()}")


if __name__ == "__main__":
    main()
