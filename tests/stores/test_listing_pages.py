"""Listing a whole store again (the store-wide follower's first round, and each wake that names no thread) asks for
one page, not one per thousand threads: the SQL stores page by OFFSET, so page k costs the k pages before it
(100,000 threads: 9 s in pages of 1,000, 0.3 s in one). A real SQLite file of 1,500 threads."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agent_explorer.stores.sqlite import SqliteEventLogStore
from agent_explorer.stores.watching import watch_threads

from .conftest import make_entries


class _CountingPages(SqliteEventLogStore):
    pages: list[tuple[int, int]]

    async def list_threads(self, *, limit: int = 100, offset: int = 0) -> Any:
        self.pages.append((limit, offset))
        return await super().list_threads(limit=limit, offset=offset)


async def test_the_store_wide_follower_lists_1500_threads_in_one_page(tmp_path: Path) -> None:
    store = _CountingPages(tmp_path / "events.db", synchronous="NORMAL")
    store.pages = []
    await store.append(thread_id="t0000", expected_index=0, entries=make_entries(0, 2))
    for n in range(1, 1500):
        await store.fork(thread_id="t0000", new_thread_id=f"t{n:04d}", up_to_index=2)
    watcher = watch_threads(store, {})
    first = await asyncio.wait_for(anext(watcher), 30)
    await watcher.aclose()
    assert len(first) == 1500 and {info.length for info in first} == {2}
    assert store.pages == [(store.pages[0][0], 0)] and store.pages[0][0] > 1500
    await store.aclose()
