"""The run list widget (`Runs`, issue 25): time to the first page, time to the whole list, and how long a thread
another writer starts takes to show while following (SQLite poll, PostgreSQL LISTEN), on a store of triage tickets.

    .venv/bin/python benchmarks/runs_list.py --threads 3000 --live 20
    .venv/bin/python benchmarks/runs_list.py --threads 3000 --live 20 --pg "$AGENT_EXPLORER_TEST_PG_DSN"

The first page is what the constructor returns with (its rows are in the `page` traitlet the browser draws); the
live figure is from the append's return to the thread being in `runs.shown` (the front end draws that page next).
The per-user summary cache goes to a fresh folder, so "cold" is a first look at the store.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_explorer import Runs, SqliteEventLogStore, read_log  # noqa: E402
from agent_explorer.samples import support_agent  # noqa: E402
from agent_explorer.samples.shipped import shipped_sample_logs_dir  # noqa: E402
from agent_explorer.samples.triage import triage_threads  # noqa: E402


def measure(url: str, store: object, live: int) -> None:
    for label in ("cache cold", "cache warm"):
        started = time.perf_counter()
        runs = Runs(url, support_agent, follow=True)
        first = time.perf_counter() - started
        runs.wait_summarized()
        whole = time.perf_counter() - started
        print(f"  {label}: first page ({len(runs.page['rows'])} rows) {first:.3f} s; "
              f"all {len(runs.summaries):,} threads {whole:.3f} s")
        if label == "cache warm" and live:
            while not runs.following:
                time.sleep(0.01)
            entries = list(read_log(shipped_sample_logs_dir() / "support_clean.jsonl"))[:3]
            delays = []
            for _ in range(live):
                thread = f"live-{uuid.uuid4().hex[:8]}"
                store.sync.append(thread_id=thread, expected_index=0, entries=entries)  # type: ignore[attr-defined]
                appended = time.perf_counter()
                while thread not in runs.shown:
                    time.sleep(0.002)
                delays.append(time.perf_counter() - appended)
                time.sleep(0.3)  # a quiet store between appends, as a host's pace would be
            delays.sort()
            p95 = delays[max(0, int(round(0.95 * len(delays))) - 1)]
            print(f"  live: a new thread shows in {statistics.median(delays) * 1000:.0f} ms median, "
                  f"{p95 * 1000:.0f} ms p95 ({len(delays)} appends)")
        runs.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=3000)
    parser.add_argument("--live", type=int, default=20)
    parser.add_argument("--pg", default=None, help="a PostgreSQL DSN: measure a schema of its own there too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        os.environ["AGENT_EXPLORER_CACHE_DIR"] = str(Path(folder) / "cache")
        threads = list(triage_threads(shipped_sample_logs_dir(), args.threads))
        path = Path(folder) / "triage.db"
        store = SqliteEventLogStore(path)
        for thread_id, entries in threads:
            store.sync.append(thread_id=thread_id, expected_index=0, entries=entries)
        print(f"SQLite, {args.threads:,} triage threads:")
        measure(f"sqlite:///{path}", store, args.live)
        store.sync.close()
        if args.pg:
            from agent_explorer.stores import PostgresEventLogStore

            schema = f"bench_{uuid.uuid4().hex[:10]}"
            os.environ["AGENT_EXPLORER_CACHE_DIR"] = str(Path(folder) / "cache-pg")
            pg = PostgresEventLogStore(args.pg, schema=schema)
            for thread_id, entries in threads:
                pg.sync.append(thread_id=thread_id, expected_index=0, entries=entries)
            print(f"PostgreSQL, {args.threads:,} triage threads:")
            url = f"{args.pg}{'&' if '?' in args.pg else '?'}schema={schema}"
            measure(url, pg, args.live)
            pg.sync.close()
            import psycopg
            from psycopg import sql

            with psycopg.connect(args.pg, autocommit=True) as conn:
                conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


if __name__ == "__main__":
    main()
