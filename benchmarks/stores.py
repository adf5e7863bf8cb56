"""Store speed beside the raw driver, measured in the same run (so ratios hold on any machine).

    .venv/bin/python benchmarks/stores.py                # memory + SQLite (+ PostgreSQL if the env var is set)
    .venv/bin/python benchmarks/stores.py --pg DSN       # PostgreSQL at DSN (a throwaway schema is dropped after)
    .venv/bin/python benchmarks/stores.py --quick        # fewer operations, for a smoke run

For each store: single-entry appends/s, 100-entry batches (entries/s), and reading a 100,000-entry thread
with JSON parsing. Each figure stands beside a raw-driver loop with the same durability:
  SQLite: raw sqlite3, WAL + synchronous=FULL, PRIMARY KEY (thread_id, idx), BEGIN/INSERT/COMMIT;
  PostgreSQL: raw psycopg (async, autocommit), the same one-statement checked INSERT ... SELECT unnest,
  binary parameters (and text parameters, to show what binary buys).
Rounds alternate store and raw and the median is reported, so disk noise hits both sides alike.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_explorer.stores.memory import InMemoryEventLogStore
from agent_explorer.stores.sqlite import SqliteEventLogStore

GOALS = {  # (figure, goal as "store/raw" throughput ratio, or raw/store time ratio for reads)
    ("sqlite", "single"): 0.8, ("sqlite", "batch"): 0.7, ("sqlite", "read"): 1 / 1.5,
    ("postgres", "single"): 0.8, ("postgres", "batch"): 0.5, ("postgres", "read"): 1 / 1.5,
}


def entry(index: int, tag: str = "") -> dict[str, Any]:
    """A typical entry (~350 bytes of JSON): an actor completion with a short text output."""
    return {
        "schemaVersion": 1, "id": f"{tag}{uuid.uuid4().hex}", "index": index,
        "recordedAt": "2026-11-30T04:00:00.000Z", "machineId": "support-agent", "machineVersion": "3",
        "event": {"type": "xstate.done.actor.draft", "output": {"text": f"Reply number {index}: thanks, we refunded the order."}},
        "causationId": "req-1", "verification": {"stateHash": "5f" * 32},
    }


async def timed(fn: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await fn()
    return time.perf_counter() - start


class Pair(tuple):  # (median seconds of ours, median seconds of raw, median of per-round raw/ours)
    pass


async def alternate(rounds: int, ours: Callable[[], Awaitable[Any]], raw: Callable[[], Awaitable[Any]]) -> Pair:
    """Time `ours` and `raw` in short rounds run back to back, the order swapped every round, so a
    burst of disk or CPU contention from other work lands on both sides alike. The ratio reported
    is the median of the per-round ratios (paired), which drifts far less than a ratio of medians."""
    a, b = [], []
    for round_no in range(rounds):
        if round_no % 2 == 0:
            a.append(await timed(ours))
            b.append(await timed(raw))
        else:
            b.append(await timed(raw))
            a.append(await timed(ours))
    return Pair((statistics.median(a), statistics.median(b), statistics.median(y / x for x, y in zip(a, b))))


class Report:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str, str, str]] = []

    def add(self, store: str, figure: str, ours: float, raw: float, unit: str, higher_is_better: bool = True, ratio: float | None = None) -> None:
        """`ratio` is store speed / raw speed (>1 means the store is faster), paired per round when given."""
        if ratio is None:
            ratio = ours / raw if higher_is_better else raw / ours
        goal = GOALS.get((store, figure))
        verdict = "" if goal is None else ("ok" if ratio >= goal else "BELOW GOAL")
        goal_text = "" if goal is None else (f">= {goal:.2f}x" if higher_is_better else f"<= {1 / goal:.2f}x time")
        shown = ratio if higher_is_better else 1 / ratio
        label = f"{shown:.2f}x" if higher_is_better else f"{shown:.2f}x time"
        self.rows.append((store, figure, f"{ours:,.0f} {unit}" if higher_is_better else f"{ours * 1000:,.1f} ms",
                          f"{raw:,.0f} {unit}" if higher_is_better else f"{raw * 1000:,.1f} ms", label, f"{goal_text} {verdict}".strip()))
        print(f"  {store:9} {figure:14} store {self.rows[-1][2]:>18}   raw {self.rows[-1][3]:>18}   {label:>11}   {self.rows[-1][5]}", flush=True)

    def markdown(self) -> str:
        lines = ["| store | figure | store | raw driver | ratio | goal |", "|---|---|---|---|---|---|"]
        lines += [f"| {' | '.join(row)} |" for row in self.rows]
        return "\n".join(lines)


# --- SQLite ---------------------------------------------------------------------------------------------


def raw_sqlite(path: str, same_schema: bool = False) -> sqlite3.Connection:
    """The issue's raw baseline (WAL, FULL, PRIMARY KEY (thread_id, idx)); `same_schema` adds the
    store's `id` column and UNIQUE (thread_id, id), to separate the schema's cost from the store's."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    unique = ", UNIQUE (thread_id, id)" if same_schema else ""
    conn.execute(f"CREATE TABLE IF NOT EXISTS raw_log (thread_id TEXT NOT NULL, idx INTEGER NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (thread_id, idx){unique})")
    return conn


def raw_sqlite_append(conn: sqlite3.Connection, thread: str, entries: list[dict[str, Any]]) -> None:
    rows = [(thread, e["index"], e["id"], orjson.dumps(e).decode()) for e in entries]
    conn.execute("BEGIN")
    if len(rows) == 1:
        conn.execute("INSERT INTO raw_log VALUES (?, ?, ?, ?)", rows[0])
    else:
        conn.executemany("INSERT INTO raw_log VALUES (?, ?, ?, ?)", rows)
    conn.execute("COMMIT")


async def bench_sqlite(report: Report, directory: str, n_single: int, n_batches: int, n_read: int, rounds: int) -> None:
    store = SqliteEventLogStore(os.path.join(directory, "bench.db"))
    raws = {"raw": raw_sqlite(os.path.join(directory, "raw.db")), "same": raw_sqlite(os.path.join(directory, "same.db"), same_schema=True)}
    lengths: dict[str, int] = {}

    def appender(who: str, thread: str, size: int, count: int) -> Callable[[], Awaitable[None]]:
        key = f"{who}:{thread}"
        lengths.setdefault(key, 0)

        async def run() -> None:
            for _ in range(count):
                start = lengths[key]
                entries = [entry(start + k) for k in range(size)]
                if who == "store":
                    lengths[key] = await store.append(thread_id=thread, expected_index=start, entries=entries)
                else:
                    raw_sqlite_append(raws[who], thread, entries)
                    lengths[key] = start + size

        return run

    for raw_kind, label in (("raw", ""), ("same", ", raw with the store's schema")):
        ours, base, paired = await alternate(rounds, appender("store", f"single-{raw_kind}", 1, n_single), appender(raw_kind, "single", 1, n_single))
        report.add("sqlite", f"single{label}", n_single / ours, n_single / base, "appends/s", ratio=paired)
        ours, base, paired = await alternate(rounds, appender("store", f"batch-{raw_kind}", 100, n_batches), appender(raw_kind, "batch", 100, n_batches))
        report.add("sqlite", f"batch{label}", 100 * n_batches / ours, 100 * n_batches / base, "entries/s", ratio=paired)

    # Reading a 100,000-entry thread, parsed: the explorer's bulk path.
    raw = raws["raw"]
    for start in range(0, n_read, 1000):
        entries = [entry(start + k) for k in range(1000)]
        await store.append(thread_id="big", expected_index=start, entries=entries)
        raw_sqlite_append(raw, "big", entries)

    async def ours_read() -> None:
        assert len(await store.read("big")) == n_read

    async def raw_read() -> None:
        rows = raw.execute("SELECT body FROM raw_log WHERE thread_id = ? AND idx >= 0 ORDER BY idx", ("big",)).fetchall()
        assert len([orjson.loads(r[0]) for r in rows]) == n_read

    ours, base, paired = await alternate(rounds, ours_read, raw_read)
    report.add("sqlite", "read", ours, base, "", higher_is_better=False, ratio=paired)
    await store.aclose()
    for conn in raws.values():
        conn.close()


# --- memory (no raw counterpart; for scale) ---------------------------------------------------------------


async def bench_memory(report: Report, n_single: int, n_read: int) -> None:
    store = InMemoryEventLogStore()
    start = time.perf_counter()
    for i in range(n_single):
        await store.append(thread_id="t", expected_index=i, entries=[entry(i)])
    single = n_single / (time.perf_counter() - start)
    for s in range(0, n_read, 1000):
        await store.append(thread_id="big", expected_index=s, entries=[entry(s + k) for k in range(1000)])
    read = await timed(lambda: store.read("big"))
    print(f"  memory    single         {single:,.0f} appends/s (validation + encoding only)   read {n_read:,}: {read * 1000:.1f} ms")


# --- PostgreSQL -------------------------------------------------------------------------------------------


async def bench_postgres(report: Report, dsn: str, n_single: int, n_batches: int, n_read: int, rounds: int) -> None:
    import psycopg
    from psycopg import sql

    from agent_explorer.stores.postgres import PostgresEventLogStore

    schema = f"bench_{uuid.uuid4().hex[:10]}"
    store = PostgresEventLogStore(dsn, schema=schema, max_size=2)
    text_store = PostgresEventLogStore(dsn, schema=schema, table="text_log", max_size=2, param_format="text")
    await store.length("warm-up")
    await text_store.length("warm-up")
    conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
    table = sql.Identifier(schema, "raw_log")
    await conn.execute(sql.SQL("CREATE TABLE {} (thread_id text COLLATE \"C\" NOT NULL, idx bigint NOT NULL, id text NOT NULL, body text NOT NULL, PRIMARY KEY (thread_id, idx), UNIQUE (thread_id, id))").format(table))

    def checked_insert(fmt: str) -> sql.Composed:
        return sql.SQL(
            "INSERT INTO {t} (thread_id, idx, id, body) SELECT %(thread){f}, %(expected){f}::bigint + u.ord - 1, u.id, u.body"
            " FROM unnest(%(ids){f}::text[], %(bodies){f}::text[]) WITH ORDINALITY AS u(id, body, ord)"
            " WHERE %(expected){f}::bigint = 0 OR EXISTS (SELECT 1 FROM {t} WHERE thread_id = %(thread){f} AND idx = %(expected){f}::bigint - 1)"
        ).format(t=table, f=sql.SQL(fmt))

    insert_binary, insert_text = checked_insert("b"), checked_insert("t")
    lengths = {"store": 0, "raw": 0}

    async def raw_append(statement: Any, thread: str, start: int, entries: list[dict[str, Any]]) -> int:
        cur = await conn.execute(statement, {"thread": thread, "expected": start, "ids": [e["id"] for e in entries],
                                             "bodies": [orjson.dumps(e).decode() for e in entries]})
        assert cur.rowcount == len(entries)
        return start + len(entries)

    async def ours_single() -> None:
        for _ in range(n_single):
            lengths["store"] = await store.append(thread_id="single", expected_index=lengths["store"], entries=[entry(lengths["store"])])

    async def raw_single() -> None:
        for _ in range(n_single):
            lengths["raw"] = await raw_append(insert_binary, "single", lengths["raw"], [entry(lengths["raw"])])

    ours, base, paired = await alternate(rounds, ours_single, raw_single)
    report.add("postgres", "single", n_single / ours, n_single / base, "appends/s", ratio=paired)

    # The same with dedicated_loop=False: the pool on the caller's loop, no thread hop per call.
    bound = PostgresEventLogStore(dsn, schema=schema, table="bound_log", max_size=2, dedicated_loop=False)
    await bound.length("warm-up")
    lengths["bound"] = 0

    async def bound_single() -> None:
        for _ in range(n_single):
            lengths["bound"] = await bound.append(thread_id="single", expected_index=lengths["bound"], entries=[entry(lengths["bound"])])

    ours, base, paired = await alternate(rounds, bound_single, raw_single)
    report.add("postgres", "single, dedicated_loop=False", n_single / ours, n_single / base, "appends/s", ratio=paired)
    await bound.aclose()

    b = {"store": 0, "raw": 0, "text_store": 0, "raw_text": 0}

    async def ours_batch() -> None:
        for _ in range(n_batches):
            b["store"] = await store.append(thread_id="batch", expected_index=b["store"], entries=[entry(b["store"] + k) for k in range(100)])

    async def raw_batch() -> None:
        for _ in range(n_batches):
            b["raw"] = await raw_append(insert_binary, "batch", b["raw"], [entry(b["raw"] + k) for k in range(100)])

    ours, base, paired = await alternate(rounds, ours_batch, raw_batch)
    report.add("postgres", "batch", 100 * n_batches / ours, 100 * n_batches / base, "entries/s", ratio=paired)

    async def ours_text_batch() -> None:
        for _ in range(n_batches):
            b["text_store"] = await text_store.append(thread_id="batch", expected_index=b["text_store"], entries=[entry(b["text_store"] + k) for k in range(100)])

    async def raw_text_batch() -> None:
        for _ in range(n_batches):
            b["raw_text"] = await raw_append(insert_text, "batch-text", b["raw_text"], [entry(b["raw_text"] + k) for k in range(100)])

    text_ours, text_raw, text_paired = await alternate(rounds, ours_text_batch, raw_text_batch)
    report.add("postgres", "batch, text params", 100 * n_batches / text_ours, 100 * n_batches / text_raw, "entries/s", ratio=text_paired)
    report.add("postgres", "raw: text/binary", 100 * n_batches / text_raw, 100 * n_batches / base, "entries/s")

    for start in range(0, n_read, 1000):
        await store.append(thread_id="big", expected_index=start, entries=[entry(start + k) for k in range(1000)])
    read_sql = sql.SQL("SELECT body FROM {} WHERE thread_id = %s AND idx >= %s ORDER BY idx").format(sql.Identifier(schema, "agent_event_log"))

    async def ours_read() -> None:
        assert len(await store.read("big")) == n_read

    async def raw_read() -> None:
        cur = await conn.execute(read_sql, ["big", 0])
        rows = await cur.fetchall()
        assert len([orjson.loads(r[0]) for r in rows]) == n_read

    ours, base, paired = await alternate(rounds, ours_read, raw_read)
    report.add("postgres", "read", ours, base, "", higher_is_better=False, ratio=paired)
    await store.aclose()
    await text_store.aclose()
    await conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
    await conn.close()


def cpu_breakdown() -> None:
    """Per-entry CPU the store adds before any I/O (best of 7; disk-independent, so it explains ratios)."""
    from agent_explorer.stores.base import prepare_batch

    batch = [entry(k) for k in range(100)]

    def best(fn: Callable[[], Any], n: int = 200) -> float:
        times = []
        for _ in range(7):
            start = time.perf_counter()
            for _ in range(n):
                fn()
            times.append((time.perf_counter() - start) / n / 100 * 1e6)
        return min(times)

    build = best(lambda: [entry(k) for k in range(100)])
    encode = best(lambda: [orjson.dumps(e).decode() for e in batch])
    prepare = best(lambda: prepare_batch("t", 0, batch))
    print(f"  cpu       per entry: build {build:.2f} us (both sides), orjson only (raw) {encode:.2f} us, "
          f"store validation + encoding {prepare:.2f} us")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pg", default=os.environ.get("AGENT_EXPLORER_TEST_PG_DSN"), help="PostgreSQL DSN (default: $AGENT_EXPLORER_TEST_PG_DSN)")
    parser.add_argument("--quick", action="store_true", help="fewer operations (smoke run)")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    n_single, n_batches, n_read = (30, 3, 10_000) if args.quick else (60, 6, 100_000)
    rounds = 2 if args.quick else args.rounds
    report = Report()
    print(f"stores benchmark: {n_single} single appends, {n_batches} x 100-entry batches, read of {n_read:,} entries; median of {rounds} alternating rounds")
    cpu_breakdown()
    await bench_memory(report, n_single, n_read)
    with tempfile.TemporaryDirectory(prefix="agent-explorer-bench-") as directory:
        await bench_sqlite(report, directory, n_single, n_batches, n_read, rounds)
    if args.pg:
        await bench_postgres(report, args.pg, n_single, n_batches, n_read, rounds)
    else:
        print("  postgres  skipped: pass --pg DSN or set AGENT_EXPLORER_TEST_PG_DSN (scripts/pg_cluster.sh start DIR prints one)")
    print()
    print(report.markdown())


if __name__ == "__main__":
    asyncio.run(main())
