"""Fleet verification beside the plain loop, measured in the same run (so ratios hold on any machine).

    .venv/bin/python benchmarks/fleet.py                      # 10,000 threads, SQLite (+ PostgreSQL if the env var is set)
    .venv/bin/python benchmarks/fleet.py --pg DSN             # PostgreSQL at DSN (a throwaway schema is dropped after)
    .venv/bin/python benchmarks/fleet.py --threads 2000 --rounds 1 --no-memory   # a smoke run

The fleet: N copies of sample_logs/support_clean.jsonl (12 entries, every one hashed) under thread ids
t000000.., in a SQLite file and in a PostgreSQL schema. For each store, in interleaved rounds:
  loop        the plain loop a team writes today: list_threads pages, then `await store.read(t)` +
              `verify_log(support_agent, entries)` per thread, on one event loop;
  sequential  verify_store(store_url, support_agent);
  2 processes verify_store(..., executor=ProcessPoolExecutor(2)) (pool started and warmed before timing);
  dask 2      verify_store(..., executor=Client(LocalCluster(n_workers=2, processes=True)).get_executor()).
Each figure is the best of its rounds (the machine is shared, so noise only ever slows a round down), and each
run's report is checked against the loop's findings. For PostgreSQL on this machine, "server CPU s" is what the
database server itself spent (it shares the cores with the workers). "CPU s" adds this process's CPU time and its workers'
(Dask: the workers'; the scheduler runs in this process): what the run costs, which load does not inflate. Then peak RSS per worker process (VmHWM) after
verifying N/10 and N threads in fresh pools/clusters: a worker holds one batch, so the two must match.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_explorer import SqliteEventLogStore, verify_log, verify_store
from agent_explorer.samples import support_agent
from agent_explorer.stores.urls import open_store

ROOT = Path(__file__).resolve().parents[1]
GOALS = {"sequential": 1.0, "2 processes": 1.7, "dask 2 workers": 1.5}


def thread_texts() -> list[str]:
    return (ROOT / "sample_logs" / "support_clean.jsonl").read_text(encoding="utf-8").splitlines()


async def build(store: Any, threads: int) -> None:
    texts = thread_texts()
    for n in range(threads):
        await store.append(thread_id=f"t{n:06d}", expected_index=0, entries=texts)


async def plain_loop(url: str) -> tuple[int, int, int]:
    """The baseline: what a team writes with the store API and verify_log alone."""
    store = open_store(url)
    threads = entries = divergent = 0
    try:
        offset = 0
        while True:
            page = await store.list_threads(limit=1000, offset=offset)
            for info in page:
                log = await store.read(info.thread_id)
                report = verify_log(support_agent, log)
                threads += 1
                entries += report.entries
                divergent += not report.ok
            if len(page) < 1000:
                break
            offset += len(page)
    finally:
        await store.aclose()
    return threads, entries, divergent


def vm_hwm_kib(pid: int) -> int:
    """Peak resident set size of a live process (Linux /proc), KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmHWM for pid {pid}")


def worker_peak_kib() -> int:
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def process_pool(workers: int) -> concurrent.futures.ProcessPoolExecutor:
    return concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))


def dask_cluster(workers: int) -> tuple[Any, Any]:
    import distributed

    cluster = distributed.LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
    )
    return cluster, distributed.Client(cluster)


def process_cpu() -> float:
    times = os.times()
    return times.user + times.system


def pids_cpu(pids: list[int]) -> float:
    """CPU seconds (user + system) of live processes, from /proc/<pid>/stat."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def server_cpu(dsn: str | None) -> Callable[[], float]:
    """CPU seconds used so far by the PostgreSQL server at `dsn` (postmaster, live backends, and the backends
    it already reaped), when it runs on this machine; a function returning 0.0 otherwise."""
    if not dsn:
        return lambda: 0.0
    from urllib.parse import urlsplit

    port = str(urlsplit(dsn).port or 5432)
    ticks = os.sysconf("SC_CLK_TCK")
    postmaster = None
    for entry in Path("/proc").iterdir():
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if args and args[0].endswith(b"postgres") and b"-p" in args and args[args.index(b"-p") + 1:][:1] == [port.encode()]:
            postmaster = int(entry.name)
    if postmaster is None:
        return lambda: 0.0

    def stat(pid: int) -> list[str]:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()

    def total() -> float:
        fields = stat(postmaster)
        seconds = sum(int(fields[k]) for k in (11, 12, 13, 14)) / ticks  # own + reaped children
        for child in Path(f"/proc/{postmaster}/task/{postmaster}/children").read_text().split():
            try:
                child_fields = stat(int(child))
            except OSError:
                continue
            seconds += (int(child_fields[11]) + int(child_fields[12])) / ticks
        return seconds

    return total


def measure(url: str, threads: int, rounds: int, batch_size: int | None,
            server: Callable[[], float] = lambda: 0.0) -> dict[str, list[tuple[float, float, float]]]:
    """(wall seconds, CPU seconds of this process and its workers, database server CPU) per run and round."""
    names = ("loop", "sequential", "2 processes", "dask 2 workers")
    times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in names}
    expected = asyncio.run(plain_loop(url))
    assert expected[0] == threads and expected[2] == 0, expected
    pool = process_pool(2)
    cluster, client = dask_cluster(2)
    try:
        warm = [f"t{n:06d}" for n in range(8)]
        verify_store(url, support_agent, executor=pool, threads=warm, batch_size=2)  # workers up, imports done
        verify_store(url, support_agent, executor=client.get_executor(), threads=warm, batch_size=2)
        pool_pids = list(pool._processes)  # noqa: SLF001 - the benchmark reads the workers' /proc entries
        runs: dict[str, tuple[Callable[[], Any], Callable[[], float]]] = {
            "loop": (lambda: asyncio.run(plain_loop(url)), lambda: 0.0),
            "sequential": (lambda: verify_store(url, support_agent, batch_size=batch_size), lambda: 0.0),
            "2 processes": (lambda: verify_store(url, support_agent, executor=pool, batch_size=batch_size),
                            lambda: pids_cpu(pool_pids)),
            "dask 2 workers": (lambda: verify_store(url, support_agent, executor=client.get_executor(),
                                                    batch_size=batch_size),
                               lambda: sum(client.run(process_cpu).values())),
        }
        for _ in range(rounds):
            for name, (run, workers_cpu) in runs.items():
                cpu_before, server_before = process_cpu() + workers_cpu(), server()
                start = time.perf_counter()
                result = run()
                wall = time.perf_counter() - start
                cpu = process_cpu() + workers_cpu() - cpu_before
                time.sleep(0.2)  # closed connections' backends exit and are reaped (their CPU moves to the server)
                times[name].append((wall, cpu, server() - server_before))
                if name != "loop":
                    assert result.threads_checked == threads and result.ok, result.summary()
                    assert result.entries_checked == expected[1]
    finally:
        pool.shutdown()
        client.close()
        cluster.close()
    return times


def memory(url: str, sizes: list[int], batch_size: int | None) -> list[tuple[int, str, list[int]]]:
    """(threads, executor, peak RSS KiB per worker) after one run in a fresh pool / cluster."""
    rows = []
    for size in sizes:
        ids = [f"t{n:06d}" for n in range(size)]
        with process_pool(2) as pool:
            verify_store(url, support_agent, executor=pool, threads=ids, batch_size=batch_size)
            pids = list(pool._processes)  # noqa: SLF001 - the benchmark reads the workers' /proc entries
            rows.append((size, "2 processes", sorted(vm_hwm_kib(pid) for pid in pids)))
        cluster, client = dask_cluster(2)
        try:
            verify_store(url, support_agent, executor=client.get_executor(), threads=ids, batch_size=batch_size)
            rows.append((size, "dask 2 workers", sorted(client.run(worker_peak_kib).values())))
        finally:
            client.close()
            cluster.close()
    return rows


def report(label: str, threads: int, times: dict[str, list[tuple[float, float, float]]]) -> bool:
    entries = threads * len(thread_texts())
    base = min(wall for wall, _, _ in times["loop"])
    rounds = len(times["loop"])
    with_server = any(server for values in times.values() for _, _, server in values)
    print(f"\n{label}: {threads:,} threads x {len(thread_texts())} entries ({rounds} rounds, best; load average "
          f"{os.getloadavg()[0]:.1f})")
    extra = f" {'server CPU s':>12} |" if with_server else ""
    print(f"| {'run':<16} | {'threads/s':>10} | {'entries/s':>10} | {'vs loop':>8} | {'goal':>6} | "
          f"{'median s':>8} | {'CPU s':>6} |{extra}")
    print(f"|{'-' * 18}|{'-' * 11}:|{'-' * 11}:|{'-' * 9}:|{'-' * 7}:|{'-' * 9}:|{'-' * 7}:|"
          + (f"{'-' * 13}:|" if with_server else ""))
    met = True
    for name, values in times.items():
        best = min(wall for wall, _, _ in values)
        cpu = min(cpu for _, cpu, _ in values)
        ratio = base / best
        goal = GOALS.get(name)
        ok = goal is None or ratio >= goal
        met &= ok
        goal_text = f"{goal:.1f}x" if goal else ""
        mark = "" if ok else " MISSED"
        server = f" {min(s for _, _, s in values):>12.2f} |" if with_server else ""
        print(f"| {name:<16} | {threads / best:>10,.0f} | {entries / best:>10,.0f} | {ratio:>7.2f}x | "
              f"{goal_text:>6} | {statistics.median(wall for wall, _, _ in values):>8.3f} | {cpu:>6.2f} |{server}{mark}")
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=None, help="threads per task (default: verify_store's)")
    parser.add_argument("--pg", default=os.environ.get("AGENT_EXPLORER_TEST_PG_DSN"), help="PostgreSQL DSN (URL form)")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-RSS runs")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}, "
          f"batch size {args.batch_size or 'auto'}")
    met = True
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fleet.db"
        start = time.perf_counter()
        store = SqliteEventLogStore(path, synchronous="NORMAL")
        asyncio.run(build(store, args.threads))
        asyncio.run(store.aclose())
        print(f"built the SQLite fleet in {time.perf_counter() - start:.1f} s")
        sqlite_url = f"sqlite:///{path}"
        met &= report("SQLite file", args.threads, measure(sqlite_url, args.threads, args.rounds, args.batch_size))
        if not args.no_memory:
            sizes = [args.threads // 10, args.threads]
            print("\npeak RSS per worker process (MiB), fresh workers per size:")
            for size, executor, peaks in memory(sqlite_url, sizes, args.batch_size):
                print(f"  {size:>7,} threads  {executor:<15} " + "  ".join(f"{kib / 1024:.1f}" for kib in peaks))
    if args.pg:
        met &= bench_postgres(args)
    print("\nall goals met" if met else "\nsome goals missed (see MISSED)")
    return 0


def bench_postgres(args: argparse.Namespace) -> bool:
    import psycopg
    from psycopg import sql

    schema = f"bench_fleet_{uuid.uuid4().hex[:8]}"
    separator = "&" if "?" in args.pg else "?"
    url = f"{args.pg}{separator}schema={schema}"
    try:
        start = time.perf_counter()
        store = open_store(url)

        async def fill() -> None:
            try:
                await build(store, args.threads)
            finally:
                await store.aclose()

        asyncio.run(fill())
        print(f"\nbuilt the PostgreSQL fleet in {time.perf_counter() - start:.1f} s")
        return report("PostgreSQL", args.threads,
                      measure(url, args.threads, args.rounds, args.batch_size, server_cpu(args.pg)))
    finally:
        with psycopg.connect(args.pg, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


if __name__ == "__main__":
    sys.exit(main())
