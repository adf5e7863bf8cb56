"""Run a store coroutine to completion from synchronous notebook code.

In a notebook an event loop is already running (the kernel's), so `asyncio.run` would refuse; the
coroutine then runs on a worker thread with its own fresh loop. Never used below `explorer/`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")


def run_sync(make: Callable[[], Awaitable[T]]) -> T:
    """Await `make()` and return its result, whether or not this thread already runs a loop.

    Takes a factory, not a coroutine, so the coroutine is created on the loop that awaits it. Caveat: a
    store holding loop-bound resources (an asyncpg-style pool opened on the kernel's loop) cannot be used
    from the worker thread's loop; open such stores lazily (the package's stores connect per call or lazily).
    """

    async def main() -> T:
        return await make()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    with ThreadPoolExecutor(
        max_workers=1, thread_name_prefix="agent-explorer-store"
    ) as pool:
        return pool.submit(asyncio.run, main()).result()
