"""A host process appending a recorded run to a store entry by entry, as a live agent would (test helper).

    python _live_writer.py STORE_URL THREAD LOG.jsonl START PAUSE [END]

appends the log's entries START..END-1 (END: the whole log), one append each, and prints each index once its
append has returned. PAUSE is the seconds between appends, or `step`: wait for a line on stdin before each
append, so a test can look at what a watcher shows after every single one.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

from agent_explorer.stores import open_store


async def main(url: str, thread_id: str, path: str, start: int, pause: str, end: int | None = None) -> None:
    entries = [json.loads(line) for line in open(path, encoding="utf-8")]
    store = open_store(url)
    try:
        for index in range(start, len(entries) if end is None else end):
            if pause == "step" and not sys.stdin.readline():
                return  # the test closed our stdin: stop where we are
            await store.append(thread_id=thread_id, expected_index=index, entries=[entries[index]])
            print(index, flush=True)
            if pause != "step":
                time.sleep(float(pause))
    finally:
        await store.aclose()


if __name__ == "__main__":
    stop = int(sys.argv[6]) if len(sys.argv) > 6 else None
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], stop))
