"""Code that runs in child processes of the fault tests (kept free of pytest so children import it fast)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from agent_explorer.errors import AgentEventLogConflictError
from agent_explorer.stores.sqlite import SqliteEventLogStore


def batch_for(round_no: int, writer: int, start: int) -> list[dict[str, Any]]:
    """Writer w's batch in round r: 1-3 entries whose metadata says whose batch they belong to."""
    size = 1 + (round_no + writer) % 3
    return [
        {
            "schemaVersion": 1,
            "id": f"r{round_no}-w{writer}-{k}",
            "index": start + k,
            "recordedAt": "2026-11-30T04:00:00.000Z",
            "machineId": "race",
            "machineVersion": "1",
            "event": {"type": "WRITE", "round": round_no, "writer": writer},
            "metadata": {"batch": f"r{round_no}-w{writer}", "size": size, "k": k},
        }
        for k in range(size)
    ]


def sqlite_race_writer(path: str, thread_id: str, writer: int, rounds: int, barrier: Any, results: Any) -> None:
    """One OS process of the same-position race: every round, read the length, meet, append there."""

    async def run() -> list[tuple[Any, ...]]:
        outcomes: list[tuple[Any, ...]] = []
        async with SqliteEventLogStore(path) as store:
            for round_no in range(rounds):
                barrier.wait(60)  # everyone's previous append has finished
                expected = await store.length(thread_id)
                barrier.wait(60)  # everyone has read the same length
                try:
                    length = await store.append(thread_id=thread_id, expected_index=expected, entries=batch_for(round_no, writer, expected))
                    outcomes.append(("win", round_no, expected, length))
                except AgentEventLogConflictError as error:
                    outcomes.append(("conflict", round_no, expected, error.thread_id, error.expected_index, error.actual_length))
                except Exception as error:
                    outcomes.append(("error", round_no, expected, f"{type(error).__name__}: {error}"))
        return outcomes

    try:
        results.put((writer, asyncio.run(run())))
    except Exception as error:
        results.put((writer, [("crashed", -1, -1, f"{type(error).__name__}: {error}")]))
        barrier.abort()
    sys.stdout.flush()


def crash_batch(rng: Any, start: int, seed: str) -> list[dict[str, Any]]:
    """1-8 entries; about one batch in four carries a 50-200 KB entry. Batch id and size ride in metadata."""
    import os as _os

    size = rng.randint(1, 8)
    big_at = rng.randrange(size) if rng.random() < 0.25 else -1
    batch_id = f"{seed}-{start}"
    batch = []
    for k in range(size):
        event: dict[str, Any] = {"type": "WRITE", "n": start + k}
        if k == big_at:
            event["blob"] = _os.urandom(rng.randint(25_000, 100_000)).hex()  # 50-200 KB of text
        batch.append({
            "schemaVersion": 1, "id": f"{batch_id}-{k}", "index": start + k,
            "recordedAt": "2026-11-30T04:00:00.000Z", "machineId": "crash", "machineVersion": "1",
            "event": event, "metadata": {"batch": batch_id, "size": size},
        })
    return batch


def crash_writer(kind: str, target: str, schema: str, thread_id: str, seed: str, ack_path: str) -> None:
    """Append batches forever, acknowledging each (after append returned) by a line in `ack_path`.

    The parent SIGKILLs this process at a random moment; a line is written with one O_APPEND write,
    so a kill leaves either the whole line or a partial one the parent ignores.
    """
    import os as _os
    import random

    fd = _os.open(ack_path, _os.O_WRONLY | _os.O_APPEND | _os.O_CREAT, 0o600)

    async def run() -> None:
        if kind == "sqlite":
            store: Any = SqliteEventLogStore(target)
        else:
            from agent_explorer.stores.postgres import PostgresEventLogStore

            store = PostgresEventLogStore(target, schema=schema, max_size=1)
        rng = random.Random(seed)
        length = await store.length(thread_id)
        _os.write(fd, f"READY {length}\n".encode())
        while True:
            try:
                length = await store.append(thread_id=thread_id, expected_index=length, entries=crash_batch(rng, length, seed))
            except AgentEventLogConflictError as conflict:
                # A killed predecessor's last statement can still commit on a PostgreSQL server after
                # we read the length; a host would re-read and go on, and so do we.
                _os.write(fd, f"CONFLICT {conflict.actual_length}\n".encode())
                length = conflict.actual_length
                continue
            _os.write(fd, f"ACK {length}\n".encode())

    asyncio.run(run())


def steady_writer(kind: str, target: str, schema: str, thread_id: str, seed: str, ack_path: str, total: int, pause: float) -> None:
    """Append 1-8-entry batches until the thread holds `total` entries, pausing `pause` s between them.

    A host's retry loop: a failed append (the server restarting, the file busy) is retried after a
    short sleep at the length read again, so the run goes on across a PostgreSQL restart.
    """
    import os as _os
    import random
    import time as _time

    from agent_explorer.errors import AgentStoreBusyError, AgentStoreError

    fd = _os.open(ack_path, _os.O_WRONLY | _os.O_APPEND | _os.O_CREAT, 0o600)

    async def run() -> None:
        if kind == "sqlite":
            store: Any = SqliteEventLogStore(target)
        else:
            from agent_explorer.stores.postgres import PostgresEventLogStore

            store = PostgresEventLogStore(target, schema=schema, max_size=1, timeout=5)
        rng = random.Random(seed)
        length = await store.length(thread_id)
        _os.write(fd, f"READY {length}\n".encode())
        retries = 0
        while length < total:
            try:
                batch = crash_batch(rng, length, seed)[: total - length]
                for entry in batch:
                    entry["metadata"]["size"] = len(batch)
                length = await store.append(thread_id=thread_id, expected_index=length, entries=batch)
                _os.write(fd, f"ACK {length}\n".encode())
            except AgentEventLogConflictError as conflict:
                length = conflict.actual_length  # our append committed but its answer was lost
            except (AgentStoreError, AgentStoreBusyError) as error:
                retries += 1
                _os.write(fd, f"RETRY {type(error).__name__}\n".encode())
                _time.sleep(0.05)
                try:
                    length = await store.length(thread_id)
                except (AgentStoreError, AgentStoreBusyError):
                    pass
            await asyncio.sleep(pause)
        _os.write(fd, f"DONE {length} {retries}\n".encode())
        await store.aclose()

    asyncio.run(run())
