"""A writer the crash test kills with SIGKILL: appends batches forever, acknowledging each on stdout.

usage: python _crash_writer.py sqlite PATH THREAD SEED   |   python _crash_writer.py postgres DSN SCHEMA THREAD SEED
Each batch is 1-8 entries; about one batch in four carries a 50-200 KB entry. The batch id and size are
in every entry's metadata, so the parent can check that only whole batches survive.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys


def make_batch(rng: random.Random, start: int, seed: str) -> list[dict]:
    size = rng.randint(1, 8)
    big_at = rng.randrange(size) if rng.random() < 0.25 else -1
    batch_id = f"{seed}-{start}"
    batch = []
    for k in range(size):
        event = {"type": "WRITE", "n": start + k}
        if k == big_at:
            event["blob"] = os.urandom(rng.randint(25_000, 100_000)).hex()  # 50-200 KB of text
        batch.append({
            "schemaVersion": 1, "id": f"{batch_id}-{k}", "index": start + k,
            "recordedAt": "2026-11-30T04:00:00.000Z", "machineId": "crash", "machineVersion": "1",
            "event": event, "metadata": {"batch": batch_id, "size": size},
        })
    return batch


async def main() -> None:
    kind = sys.argv[1]
    if kind == "sqlite":
        from agent_explorer.stores.sqlite import SqliteEventLogStore

        store = SqliteEventLogStore(sys.argv[2])
        thread, seed = sys.argv[3], sys.argv[4]
    else:
        from agent_explorer.stores.postgres import PostgresEventLogStore

        store = PostgresEventLogStore(sys.argv[2], schema=sys.argv[3], max_size=1)
        thread, seed = sys.argv[4], sys.argv[5]
    rng = random.Random(seed)
    length = await store.length(thread)
    print(f"READY {length}", flush=True)
    while True:
        length = await store.append(thread_id=thread, expected_index=length, entries=make_batch(rng, length, seed))
        print(f"ACK {length}", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
