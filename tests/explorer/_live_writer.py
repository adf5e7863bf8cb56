"""A host process appending a recorded run to a store entry by entry, as a live agent would (test helper)."""

from __future__ import annotations

import asyncio
import json
import sys
import time

from agent_explorer.stores import open_store


async def main(url: str, thread_id: str, path: str, start: int, pause: float) -> None:
    entries = [json.loads(line) for line in open(path, encoding="utf-8")]
    store = open_store(url)
    try:
        for index in range(start, len(entries)):
            await store.append(thread_id=thread_id, expected_index=index, entries=[entries[index]])
            print(index, flush=True)
            time.sleep(pause)
    finally:
        await store.aclose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])))
