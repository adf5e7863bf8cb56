"""The run list's cache: rows and fold carries kept outside the store, in the user's cache folder.

One SQLite file per (store identity, machine structural identity) under `user_cache_dir("agent-explorer")/runs`
(`AGENT_EXPLORER_CACHE_DIR` overrides the folder). A cached thread is keyed by its length and the digest of its
last entry's text (`head`, compared with the store's `thread_heads` in bulk; its last entry's id and recorded hash
when a tail is read instead), and each record carries its own digest: a file that is corrupt, foreign or of
another format is set aside and rebuilt, a record that does not check is ignored, never trusted. Only the
process that calls `summarize_runs` writes here; workers read. Never writes to the store.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from ..canonical.jcs import state_hash
from ..explorer.prices import Prices
from ..stores.base import EventLogStore
from ..stores.urls import redact_url, sqlite_path, store_url, without_mode
from .row import Carry, RunSummary, priced

__all__ = [
    "CACHE_ENV", "FORMAT", "Record", "SummaryCache", "cache_dir", "cache_key", "machine_identity", "payload",
    "served_row", "snapshot_of", "store_identity",
]

CACHE_ENV = "AGENT_EXPLORER_CACHE_DIR"
FORMAT = "agent-explorer/runs-cache/3"
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


Record = tuple[str, bytes, bytes, int, "bytes | None"]
"""What a batch hands back to be cached: (thread id, payload, snapshot, length, head digest or None)."""


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
        # `length` and `head` repeat the payload's key outside it, so a reopened store is matched against the
        # cache without parsing a record per thread; a served record is parsed, and its payload must agree.
        connection.execute(
            "CREATE TABLE IF NOT EXISTS threads (thread_id TEXT PRIMARY KEY, digest TEXT NOT NULL, payload BLOB NOT NULL, "
            "snapshot BLOB NOT NULL, length INTEGER, head BLOB)"
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

    def keyed(self, thread_ids: Sequence[str] | None = None) -> dict[str, tuple[int, bytes, str, bytes, bytes]]:
        """Every record (or those of `thread_ids`) by thread id, unparsed: (length, head, digest, payload, snapshot),
        in one read of the file (a reopened store is matched against it in bulk). Records without a head are left
        out: they are served only after a tail read (`lookup`)."""
        if self._connection is None:
            return {}
        query = "SELECT thread_id, length, head, digest, payload, snapshot FROM threads WHERE head IS NOT NULL"
        found: dict[str, tuple[int, bytes, str, bytes, bytes]] = {}
        try:
            if thread_ids is None or len(thread_ids) > 5000:  # most of the file: one scan, then pick
                wanted = None if thread_ids is None else set(thread_ids)
                for thread_id, *rest in self._connection.execute(query):
                    if wanted is None or thread_id in wanted:
                        found[thread_id] = tuple(rest)
            else:
                ids = list(thread_ids)
                for start in range(0, len(ids), 500):
                    chunk = ids[start : start + 500]
                    marks = ",".join("?" * len(chunk))
                    for thread_id, *rest in self._connection.execute(f"{query} AND thread_id IN ({marks})", chunk):
                        found[thread_id] = tuple(rest)
        except sqlite3.DatabaseError:
            return {}
        return found

    def has_records(self, thread_ids: Sequence[str] | None = None) -> bool:
        """Does the file hold any record (of `thread_ids`, when given)? Else matching the store against it is
        skipped: a first look, or a followed list folding threads that just appeared."""
        if self._connection is None:
            return False
        try:
            if thread_ids is None or len(thread_ids) > 5000:
                return self._connection.execute("SELECT 1 FROM threads LIMIT 1").fetchone() is not None
            ids = list(thread_ids)
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                if self._connection.execute(f"SELECT 1 FROM threads WHERE thread_id IN ({marks}) LIMIT 1",
                                            chunk).fetchone() is not None:
                    return True
            return False
        except sqlite3.Error:  # a cache that cannot answer (or an id it cannot bind) is not consulted
            return False

    def store(self, records: Iterable[Record]) -> None:
        """Write `(thread_id, payload, snapshot, length, head)` records (as `payload()` builds them); a failure is
        dropped."""
        if self._connection is None or not self.writable:
            return
        rows = [(thread_id, _digest(data, snapshot), data, snapshot, length, head)
                for thread_id, data, snapshot, length, head in records]
        if not rows:
            return
        try:
            with self._connection:
                self._connection.executemany(
                    "INSERT OR REPLACE INTO threads (thread_id, digest, payload, snapshot, length, head)"
                    " VALUES (?, ?, ?, ?, ?, ?)", rows)
        except sqlite3.Error:
            pass  # a cache that cannot be written only costs a refold next time

    def close(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(sqlite3.Error):
                self._connection.close()
            self._connection = None


def payload(thread_id: str, carry: Carry, row: Mapping[str, Any]) -> Record:
    """One cache record: the carry without its snapshot and the row's folded fields (the thread id inside, so a
    record moved to another key does not check), the persisted snapshot on its own, and the key columns."""
    data = carry.to_json()
    snapshot = orjson.dumps(data.pop("persisted"))
    head = bytes.fromhex(carry.head) if carry.head is not None else None
    return (thread_id, orjson.dumps({"format": FORMAT, "thread_id": thread_id, "carry": data, "row": dict(row)}),
            snapshot, carry.length, head)


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


def served_row(thread_id: str, record: tuple[int, bytes, str, bytes, bytes], prices: Prices | None
               ) -> tuple[int, bytes, RunSummary] | None:
    """(length, head digest, row) of a record as `keyed` reads it: the row it serves a thread whose head is that
    length and digest. None for a record that does not check (digest, format, thread id, shape, key columns that
    disagree with the payload), which is never trusted. The row is built straight from the record: no carry, the
    snapshot only hashed."""
    length, head, digest, data, snapshot = record
    if type(data) is not bytes or type(snapshot) is not bytes or type(head) is not bytes \
            or _digest(data, snapshot) != digest:
        return None
    try:
        parsed = orjson.loads(data)
        carry, row = parsed["carry"], parsed["row"]
        if parsed["format"] != FORMAT or parsed["thread_id"] != thread_id or carry["length"] != length \
                or carry["head"] != head.hex() or row["status"] not in _FOLDED:
            return None  # the key columns must say what the checked payload says
        if not _in_shape(carry, row):
            return None
        first, last, machine_id, version = (carry["first_recorded"], carry["last_recorded"], carry["machine_id"],
                                            carry["version"])
        verified, divergent = row["verified"], carry["divergent_index"]
        return length, head, RunSummary(
            thread_id, length, first, last, machine_id, version, str(row["state"]), row["status"], int(row["owed"]), verified, divergent,
            int(row["total_tokens"]), priced(float(carry["recorded_cost"]), carry["tokens_by_model"], prices), None,
            row.get("value"),
        )
    except Exception:  # noqa: BLE001 - any record that does not parse is ignored and rebuilt
        return None


def _in_shape(carry: Mapping[str, Any], row: Mapping[str, Any]) -> bool:
    """The fields a served row takes from a record, of the types a fold writes (a signed record may still lie)."""
    first, last, machine_id, version = carry["first_recorded"], carry["last_recorded"], carry["machine_id"], \
        carry["version"]
    divergent = carry["divergent_index"]
    return (row["verified"] in (True, False, None) and (divergent is None or type(divergent) is int)
            and (first is None or type(first) is str) and (last is None or type(last) is str)
            and (machine_id is None or type(machine_id) is str) and (version is None or type(version) is str)
            and row["status"] in _FOLDED)


_FOLDED = frozenset(("done", "error", "idle", "in-flight"))
"""The statuses a cached row may hold (skipped and unreadable rows are never cached)."""


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
        if not isinstance(row, dict) or not _in_shape(record["carry"], row):
            return None
        return carry, row, snapshot
    except Exception:  # noqa: BLE001 - any record that does not parse is ignored and rebuilt
        return None
