"""A host appending a run of the counter machine to a store thread, slowly, in another process.

    python _follow_writer.py STORE_URL THREAD EVENTS [--tamper I] [--pause-at I --go FILE] [--no-stop] [--schema S]

Entries get real hashes (the fold of the machine in follow_machines.py); `--tamper I` records a wrong hash
at index I; `--pause-at I` appends up to index I, then waits for FILE to exist before going on; the run
ends with STOP (a final state) unless `--no-stop`. Prints `APPENDED n` after each append.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time

from follow_machines import counter

from agent_explorer import create_replay_entry, init_entry, initial_transition, open_store, transition


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("thread")
    parser.add_argument("events", type=int)
    parser.add_argument("--tamper", type=int, default=-1)
    parser.add_argument("--pause-at", type=int, default=-1)
    parser.add_argument("--go")
    parser.add_argument("--no-stop", action="store_true")
    parser.add_argument("--interval", type=float, default=0.02)
    parser.add_argument("--schema")
    args = parser.parse_args()
    options = {"schema": args.schema} if args.schema else {}
    store = open_store(args.url, **options)
    snapshot, _ = initial_transition(counter)
    entries = [init_entry(counter, input=None, metadata={"machineRef": "follow_machines:counter"})]
    events = [{"type": "INC"} for _ in range(args.events)] + ([] if args.no_stop else [{"type": "STOP"}])
    for index, event in enumerate(events, start=1):
        snapshot, _ = transition(counter, snapshot, event)
        entry = create_replay_entry(counter, event, index, snapshot_after=snapshot)
        if index == args.tamper:
            entry["verification"]["stateHash"] = "0" * 64
        entries.append(entry)
    length = await store.length(args.thread)
    position = length
    while position < len(entries):
        size = 1 + position % 3
        batch = entries[position : position + size]
        if args.pause_at >= 0 and position <= args.pause_at < position + size:
            batch = entries[position : args.pause_at + 1]
        position = await store.append(thread_id=args.thread, expected_index=position, entries=batch)
        print(f"APPENDED {position}", flush=True)
        if args.pause_at >= 0 and position == args.pause_at + 1 and args.go:
            while not os.path.exists(args.go):
                time.sleep(0.01)
        time.sleep(args.interval)
    await store.aclose()


asyncio.run(main())
