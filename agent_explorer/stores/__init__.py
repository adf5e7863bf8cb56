"""Event-log stores: the in-memory reference, SQLite (embedded default), PostgreSQL, and their conformance suite.

`PostgresEventLogStore` is imported on first use, so the package works without the `[postgres]` extra.
"""

from __future__ import annotations

from typing import Any

from .base import EventLogStore, ThreadHead, ThreadInfo
from .conformance import assert_event_log_store_conformance
from .memory import InMemoryEventLogStore, create_in_memory_event_log_store
from .portal import SyncStore

__all__ = [
    "EventLogStore",
    "SyncStore",
    "ThreadInfo",
    "ThreadHead",
    "InMemoryEventLogStore",
    "create_in_memory_event_log_store",
    "SqliteEventLogStore",
    "PostgresEventLogStore",
    "assert_event_log_store_conformance",
    "open_store",
    "copy_thread",
    "export_thread_jsonl",
    "import_thread_jsonl",
]

_LAZY = {
    "SqliteEventLogStore": ".sqlite",
    "PostgresEventLogStore": ".postgres",
    "open_store": ".urls",
    "copy_thread": ".copy",
    "export_thread_jsonl": ".copy",
    "import_thread_jsonl": ".copy",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value
