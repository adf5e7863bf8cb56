"""An explorer opened from a read-only SQLite store (as the notebook `agent-explorer open` writes does it): it
explores and forks in memory, the file stays byte for byte as it was, and `branch.save` into that store is refused
with a clear error naming the way out, while saving to a store opened for writing works."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent_explorer import SqliteEventLogStore, open_store, read_log
from agent_explorer.errors import AgentStoreError
from agent_explorer.explorer import Explorer
from agent_explorer.samples import support_agent

LOGS = Path(__file__).parents[2] / "sample_logs"


def test_a_read_only_store_explores_forks_in_memory_and_refuses_a_save(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    writer = SqliteEventLogStore(path)
    writer.sync.append(thread_id="t", expected_index=0, entries=list(read_log(LOGS / "support_clean.jsonl")))
    writer.sync.close()
    with sqlite3.connect(path) as raw:  # a rollback-journal file: a read-write open would switch it to WAL
        raw.execute("PRAGMA journal_mode = DELETE")
    before = path.read_bytes()

    store = open_store(f"sqlite:///{path}", read_only=True)
    try:
        ex = Explorer.from_store(store, "t", support_agent)
        ex.index = 5
        branch = ex.fork(at=8, name="what-if")
        assert len(branch) == 8 and branch.snapshot is not None
        with pytest.raises(AgentStoreError) as caught:
            branch.save()
        assert caught.value.code == "store-read-only"
        assert "read-only" in caught.value.message and "open_store" in caught.value.message
        assert branch.store is None and branch.thread_id is None  # still only in memory
    finally:
        store.sync.close()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.db"]

    writable = open_store(f"sqlite:///{path}")
    try:
        assert branch.save(store=writable) == "t~what-if"
        assert len(writable.sync.read("t~what-if")) == 8
    finally:
        writable.sync.close()
