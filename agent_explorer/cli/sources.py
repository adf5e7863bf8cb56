"""Where a log comes from or goes to on the command line: a file (JSONL / JSON array) or `STORE_URL#thread`.

`sqlite:///runs.db#session-1`, `postgresql://user@host/db#session-1` and `memory:#t` name a thread in a store;
anything else is a file path. This module only resolves and moves entries; it never alters what it reads.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from ..errors import AgentError
from ..plural import plural
from ..stores.portal import run_sync
from ..stores.urls import redact_url
from .logpath import log_path, require_log_file

if TYPE_CHECKING:
    from ..stores.base import ThreadInfo

T = TypeVar("T")

STORE_SCHEMES = ("sqlite:", "postgresql:", "postgres:", "memory:")


@dataclass(frozen=True)
class LogSource:
    """A parsed LOG argument: a file, or a thread in a store."""

    path: Path | None = None
    store_url: str | None = None
    thread_id: str | None = None

    @property
    def is_store(self) -> bool:
        return self.store_url is not None

    def describe(self) -> str:
        """How messages name this log: a store URL without its password (`redact_url`, as the fleet's reports)."""
        return f"{redact_url(self.store_url)}#{self.thread_id}" if self.store_url is not None else str(self.path)


def parse_source(text: str, *, thread_required: bool = True) -> LogSource:
    if text.startswith(STORE_SCHEMES):
        url, sep, thread = text.partition("#")
        if thread_required and (not sep or not thread):
            raise AgentError(
                f"{redact_url(text)!r} names a store but no thread: add '#<thread id>' (e.g. {redact_url(url)}#session-1)",
                code="invalid-argument",
            )
        return LogSource(store_url=url, thread_id=thread or None)
    return LogSource(path=log_path(text))


StoreUse = Literal["read", "write", "create"]


def open_cli_store(url: str, use: StoreUse = "read") -> Any:
    """The store one command works on. "read" and "write" need the store to exist (a mistyped SQLite path is an
    error, never a new empty database); "read" opens SQLite read-only, so reading never switches a file's
    journal mode or adds a table; "create" may make the file. A PostgreSQL server that does not answer is
    reported in seconds, not after the pool's 30 s default."""
    from ..stores.urls import open_store, require_sqlite_file

    options: dict[str, Any] = {}
    lowered = url.lower()
    if lowered.startswith("sqlite:"):
        if use != "create":
            require_sqlite_file(url)
        if use == "read":
            options["read_only"] = True
    elif lowered.startswith(("postgresql:", "postgres:")):
        options["timeout"] = float(os.environ.get("AGENT_EXPLORER_DB_TIMEOUT", "10"))
    return open_store(url, **options)


async def _with_store(url: str, fn: Callable[[Any], Awaitable[T]], use: StoreUse = "read") -> T:
    store = open_cli_store(url, use)
    try:
        return await fn(store)
    finally:
        close = getattr(store, "aclose", None)
        if close is not None:
            await close()


def _existing_file(source: LogSource) -> Path:
    assert source.path is not None
    return require_log_file(source.path)


def _read_thread(source: LogSource, *span: int) -> list[dict[str, Any]]:
    """A store thread's entries (all, or `start, end`); a missing or empty thread is an error, not an empty log."""

    async def read(store: Any) -> list[dict[str, Any]]:
        entries = await store.read(source.thread_id, *span)
        if not entries:
            raise AgentError(
                f"thread {source.thread_id!r} is empty or does not exist in {redact_url(source.store_url or '')}",
                code="thread-not-found",
            )
        return list(entries)

    assert source.store_url is not None
    return run_sync(_with_store(source.store_url, read))


def load_entries(source: LogSource, *, on_truncated: Literal["error", "drop"] = "error") -> list[dict[str, Any]]:
    """Read every entry of a file or a store thread (a missing thread is an error, not an empty log)."""
    if not source.is_store:
        from ..eventlog.files import read_log

        return list(read_log(_existing_file(source), on_truncated=on_truncated))

    return _read_thread(source)


async def _require_empty_thread(store: Any, dest: LogSource) -> None:
    """Imports start new threads: appending a copy onto an existing log would splice two runs."""
    length = await store.length(dest.thread_id)
    if length:
        raise AgentError(
            f"thread {dest.thread_id!r} in {redact_url(dest.store_url or '')} already has "
            f"{plural(length, 'entry', 'entries')}; import into a new thread id",
            code="thread-not-empty",
        )


def save_entries(dest: LogSource, entries: list[dict[str, Any]]) -> int:
    """Write a whole log to a new file or an empty store thread; never overwrites what exists."""
    if not dest.is_store:
        from ..eventlog.files import write_log

        assert dest.path is not None
        if dest.path.exists():
            raise AgentError(f"{dest.path} already exists; choose another file name", code="file-exists")
        write_log(dest.path, entries)
        return len(entries)

    async def write(store: Any) -> int:
        await _require_empty_thread(store, dest)
        return int(await store.append(thread_id=dest.thread_id, expected_index=0, entries=entries))

    assert dest.store_url is not None
    return run_sync(_with_store(dest.store_url, write, "create"))


def copy_log(source: LogSource, dest: LogSource) -> int:
    """Copy a whole log; between a store and JSONL (or two stores) the stored JSON text moves byte for byte."""
    from ..stores.copy import copy_thread, export_thread_jsonl, import_thread_jsonl

    def jsonl(path: Path | None) -> bool:
        return path is not None and path.suffix.lower() != ".json"

    if source.is_store and dest.is_store:
        async def between_stores() -> int:
            async def with_dest(dst: Any) -> int:
                return await _with_store(
                    source.store_url or "",
                    lambda src: copy_thread(src, source.thread_id or "", dst, dest.thread_id or ""),
                )
            return int(await _with_store(dest.store_url or "", with_dest, "create"))

        return run_sync(between_stores())
    if source.is_store and jsonl(dest.path):
        target = dest.path
        assert target is not None
        if target.exists():
            raise AgentError(f"{target} already exists; choose another file name", code="file-exists")
        return int(run_sync(_with_store(
            source.store_url or "", lambda store: export_thread_jsonl(store, source.thread_id or "", target))))
    if dest.is_store and jsonl(source.path):
        assert source.path is not None
        path = require_log_file(source.path)

        async def into(store: Any) -> int:
            await _require_empty_thread(store, dest)
            return int(await import_thread_jsonl(store, dest.thread_id or "", path))

        return int(run_sync(_with_store(dest.store_url or "", into, "create")))
    return save_entries(dest, load_entries(source))


def list_threads(url: str, limit: int, offset: int) -> list[ThreadInfo]:
    async def threads(store: Any) -> list[ThreadInfo]:
        return list(await store.list_threads(limit=limit, offset=offset))

    return run_sync(_with_store(url, threads))


def fork_thread(source: LogSource, new_thread_id: str, up_to_index: int) -> None:
    async def fork(store: Any) -> None:
        await store.fork(thread_id=source.thread_id, new_thread_id=new_thread_id, up_to_index=up_to_index)

    assert source.store_url is not None
    run_sync(_with_store(source.store_url, fork, "write"))


def load_head(source: LogSource) -> list[dict[str, Any]]:
    """The init entry alone (as a one-entry list): enough to name the machine without reading a long log."""
    if not source.is_store:
        from ..eventlog.files import iter_log

        for entry in iter_log(_existing_file(source)):
            return [entry]
        raise AgentError(f"{source.path} holds no entries", code="empty-log")

    return _read_thread(source, 0, 1)
