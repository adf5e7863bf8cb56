"""The run list's cache: rows and fold carries kept outside the store, in the user's cache folder.

One SQLite file per (store identity, machine structural identity) under `user_cache_dir("agent-explorer")/runs`
(`AGENT_EXPLORER_CACHE_DIR` overrides the folder). A cached thread is keyed by its length, its last entry's id
and that entry's recorded hash, and each payload carries its own digest: a file that is corrupt, foreign or
of another format is set aside and rebuilt, a payload that does not check is ignored, never trusted. Only
the process that calls `summarize_runs` writes here; workers read. Never writes to the store.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

from ..canonical.jcs import state_hash
from ..stores.base import EventLogStore
from ..stores.urls import redact_url, sqlite_path, store_url, without_mode
from .row import Carry

__all__ = [
    "CACHE_ENV", "FORMAT", "SummaryCache", "cache_dir", "cache_key", "machine_identity", "payload", "snapshot_of",
    "store_identity",
]

CACHE_ENV = "AGENT_EXPLORER_CACHE_DIR"
FORMAT = "agent-explorer/runs-cache/2"
"""Bumped whenever a payload's meaning changes: a file of another format is rebuilt, not read."""


def cache_dir() -> Path:
    """The folder the run list caches in: `$AGENT_EXPLORER_CACHE_DIR`, else the per-user cache folder."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_dir("agent-explorer", appauthor=False)) / "runs"


def store_identity(store: EventLogStore | str) -> str | None:
    """What names a store across sessions: its URL without password or mode; a SQLite file also by its inode
    (a file deleted and made again at the same path is another store). None: a store with no URL (memory)."""
    url = store if isinstance(store, str) else store_url(store)
    if url is None:
        return None
    identity = redact_url(without_mode(url))
    if url.lower().startswith("sqlite:"):
        try:
            path = Path(sqlite_path(url)).resolve()
            status = path.stat()
        except (OSError, ValueError):
            return None
        identity = f"sqlite:{path}#{status.st_dev}:{status.st_ino}"
    return identity


def machine_identity(machine: Any) -> str:
    """The machine as the cache knows it: id, declared version and the structural hash of its definition (a
    changed chart under an unchanged declared version still invalidates)."""
    return f"{machine.id}|{machine.version}|{state_hash(machine.definition)}"


def cache_key(store: str, machine: str) -> str:
    return hashlib.sha256(f"{FORMAT}\n{store}\n{machine}".encode()).hexdigest()[:40]


def _digest(payload: bytes, snapshot: bytes) -> str:
    return hashlib.sha256(b"%d\n%b%b" % (len(payload), payload, snapshot)).hexdigest()


class SummaryCache:
    """One cache file: `lookup(thread_ids)` -> carries and rows that check; `store(records)` writes a batch."""

    def __init__(self, path: Path, store: str, machine: str, *, writable: bool) -> None:
        self.path = path
        self.meta = {"format": FORMAT, "store": store, "machine": machine}
        self.writable = writable
        self._connection: sqlite3.Connection | None = None

    @classmethod
    def for_run(cls, store: EventLogStore | str, machine: Any) -> SummaryCache | None:
        """The writable cache of this store and machine (created when missing), or None without one."""
        identity = store_identity(store)
        if identity is None:
            return None
        machine_key = machine_identity(machine)
        folder = cache_dir()
        cache = cls(folder / f"{cache_key(identity, machine_key)}.sqlite", identity, machine_key, writable=True)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            cache._open()
        except (OSError, sqlite3.Error):
            return None  # no cache folder we may write: fold everything
        return cache

    def reader(self) -> dict[str, Any]:
        """What a worker needs to read this cache (picklable)."""
        return {"path": str(self.path), **self.meta}

    @classmethod
    def open_reader(cls, spec: Mapping[str, Any] | None) -> SummaryCache | None:
        """A read-only view for a worker; None when the file is not there (another host) or does not check."""
        if not spec:
            return None
        cache = cls(Path(spec["path"]), spec["store"], spec["machine"], writable=False)
        try:
            cache._open()
        except (OSError, sqlite3.Error):
            return None
        return cache

    def _open(self) -> None:
        if self.writable:
            try:
                self._connect()
                if self._meta_ok():
                    return
            except sqlite3.DatabaseError:
                pass
            self.close()
            self._set_aside()
            self._connect()
            return
        if not self.path.exists():
            raise OSError("no cache file")
        self._connection = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=5,
                                           check_same_thread=False)
        if not self._meta_ok():
            self.close()
            raise sqlite3.DatabaseError("cache file of another store, machine or format")

    def _connect(self) -> None:
        connection = sqlite3.connect(self.path, timeout=5, check_same_thread=False)
        self._connection = connection
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        connection.execute(
            "CREATE TABLE IF NOT EXISTS threads (thread_id TEXT PRIMARY KEY, digest TEXT NOT NULL, payload BLOB NOT NULL, "
            "snapshot BLOB NOT NULL)"
        )
        present = dict(connection.execute("SELECT key, value FROM meta").fetchall())
        if not present:
            connection.executemany("INSERT INTO meta VALUES (?, ?)", list(self.meta.items()))
            connection.commit()

    def _meta_ok(self) -> bool:
        assert self._connection is not None
        try:
            present = dict(self._connection.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError:
            return False
        return present == self.meta

    def _set_aside(self) -> None:
        """A file that is not ours to read: removed (it is a cache), then made again."""
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                Path(f"{self.path}{suffix}").unlink()

    def lookup(self, thread_ids: Iterable[str]) -> dict[str, tuple[Carry, dict[str, Any], bytes]]:
        """The cached (carry, row, snapshot JSON) of each thread that has one whose record checks; the others are
        absent. The carry's `persisted` is left empty: only a grown thread needs it (`snapshot_of`), and it is most
        of a record's bytes, so serving an unchanged thread never parses it."""
        if self._connection is None:
            return {}
        ids = list(thread_ids)
        found: dict[str, tuple[Carry, dict[str, Any], bytes]] = {}
        try:
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                for thread_id, digest, payload, snapshot in self._connection.execute(
                    f"SELECT thread_id, digest, payload, snapshot FROM threads WHERE thread_id IN ({marks})", chunk
                ):
                    parsed = _parse(thread_id, digest, payload, snapshot)
                    if parsed is not None:
                        found[thread_id] = parsed
        except sqlite3.DatabaseError:
            return found
        return found

    def store(self, records: Iterable[tuple[str, bytes, bytes]]) -> None:
        """Write `(thread_id, payload, snapshot)` records (as `payload()` builds them); a failure is dropped."""
        if self._connection is None or not self.writable:
            return
        rows = [(thread_id, _digest(data, snapshot), data, snapshot) for thread_id, data, snapshot in records]
        if not rows:
            return
        try:
            with self._connection:
                self._connection.executemany("INSERT OR REPLACE INTO threads VALUES (?, ?, ?, ?)", rows)
        except sqlite3.Error:
            pass  # a cache that cannot be written only costs a refold next time

    def close(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(sqlite3.Error):
                self._connection.close()
            self._connection = None


def payload(thread_id: str, carry: Carry, row: Mapping[str, Any]) -> tuple[str, bytes, bytes]:
    """One cache record: the carry without its snapshot and the row's folded fields (the thread id inside, so a
    record moved to another key does not check), and the persisted snapshot on its own."""
    data = carry.to_json()
    snapshot = orjson.dumps(data.pop("persisted"))
    return thread_id, orjson.dumps({"format": FORMAT, "thread_id": thread_id, "carry": data, "row": dict(row)}), snapshot


def snapshot_of(carry: Carry, snapshot: bytes) -> Carry | None:
    """The carry with its persisted snapshot parsed (for a grown thread), or None when it does not parse."""
    try:
        persisted = orjson.loads(snapshot)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(persisted, dict):
        return None
    carry.persisted = persisted
    return carry


def _parse(thread_id: str, digest: Any, data: Any, snapshot: Any) -> tuple[Carry, dict[str, Any], bytes] | None:
    if not isinstance(data, bytes) or not isinstance(snapshot, bytes) or not isinstance(digest, str) \
            or _digest(data, snapshot) != digest:
        return None
    try:
        record = orjson.loads(data)
        if record.get("format") != FORMAT or record.get("thread_id") != thread_id:
            return None
        row = record["row"]
        carry = Carry.from_json({**record["carry"], "persisted": {}})
        if not isinstance(row, dict) or row.get("status") not in ("done", "error", "idle", "in-flight"):
            return None
        return carry, row, snapshot
    except Exception:  # noqa: BLE001 - any record that does not parse is ignored and rebuilt
        return None
