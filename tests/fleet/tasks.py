"""A task of its own for the fleet machinery (importable by worker processes): what other fleet tasks look like."""

from __future__ import annotations

import os
from collections.abc import Sequence

from agent_explorer.fleet import BatchContext, read_threads


async def entry_counts(context: BatchContext, thread_ids: Sequence[str]) -> list[tuple[str, int, int]]:
    """(thread id, entries, pid of the process that read it) per thread; unreadable threads count -1."""
    return [
        (read.thread_id, -1 if read.entries is None else len(read.entries), os.getpid())
        async for read in read_threads(context.store, thread_ids)
    ]
