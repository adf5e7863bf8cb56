"""The SQLite event-log store: one file, WAL, durable by default; the embedded default store.

Every sqlite3 call runs on one worker thread owned by the store (with its own connection), so the event
loop never waits on disk. Driver errors are translated in one place (`_translate`); this module never
lets a raw `sqlite3` exception or a "database is locked" reach a caller.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import threading
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from ..errors import (
    AgentError,
    AgentEventLogConflictError,
    AgentStoreBusyError,
    AgentStoreError,
)
from ..eventlog.files import NotUtf8Text
from ..filekinds import not_a_regular_file
from .base import (
    EventLogStore,
    PreparedEntry,
    ThreadHead,
    ThreadInfo,
    check_fork,
    check_fork_range,
    check_identifier,
    check_page,
    check_read,
    check_thread_id,
    check_thread_ids,
    duplicate_id_error,
    head_digest,
    parse_stored_rows,
    prepare_batch,
)
from .watching import PollWakeUp, WakeUp

WATCH_POLL = (0.005, 0.1)  # seconds: a watcher's shortest and longest wait between two cheap polls

__all__ = ["SqliteEventLogStore", "SYNCHRONOUS_LEVELS", "DEFAULT_FILE_NAME"]

T = TypeVar("T")

SYNCHRONOUS_LEVELS = ("FULL", "EXTRA", "NORMAL")
DEFAULT_FILE_NAME = "events.db"
_BUSY_CODES = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}


class SqliteEventLogStore(EventLogStore):
    """An event-log store in one SQLite file, safe for several processes writing at once.

    Durability: the file is in WAL mode with `synchronous=FULL` by default, so every acknowledged
    append has been fsynced into the WAL before `append` returns and survives power loss.
    `synchronous="NORMAL"` is an explicit opt-in that fsyncs only at checkpoints: faster, still
    consistent after an application crash, but a power loss can drop the last acknowledged commits.

    Concurrency: each append takes the write lock up front (`BEGIN IMMEDIATE`), reads the length
    and inserts, so a stale writer sees the true length and gets AgentEventLogConflictError; waiting
    writers sleep in SQLite's busy handler up to `busy_timeout` seconds, after which the append
    fails with the retryable AgentStoreBusyError and writes nothing. Readers never block writers.

    Watching: another process may be the writer, so there is no in-process signal. A watcher polls
    `PRAGMA data_version` on a connection of its own (it changes whenever another connection
    commits; microseconds, no table read) every `watch_poll[0]` seconds, the interval growing by
    half each quiet poll up to `watch_poll[1]` (default 5 ms to 100 ms), and reads only when it
    changed. In WAL mode neither the poll nor the read blocks a writer.

    `path` is the database file, created if missing; an existing directory means `events.db` inside it.
    `read_only=True` opens an existing file without writing to it (no pragma, no DDL; append and fork
    are refused), e.g. a log shipped with a repository or a colleague's file opened in the explorer.
    The main file never changes, but SQLite itself needs a `-wal` and `-shm` beside a WAL-mode file to
    read it, and creates them if missing (a read from a folder it cannot write to then fails).
    `immutable=True` (implies read_only; `?immutable=1` in a URL) is SQLite's `immutable` URI parameter:
    no lock, no `-wal`/`-shm`, nothing created or changed at all, for a copied file on read-only media.
    Only for a file nothing writes to while it is open: SQLite trusts it not to change, and commits still
    in a `-wal` beside it are not seen.

    Storage: table `table` (default `agent_event_log`) with `PRIMARY KEY (thread_id, idx)`,
    `UNIQUE (thread_id, id)`, and each entry's exact JSON text in `body`.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: str = "FULL",
        busy_timeout: float = 10.0,
        table: str = "agent_event_log",
        read_only: bool = False,
        watch_poll: tuple[float, float] = WATCH_POLL,
        immutable: bool = False,
    ) -> None:
        self.path = os.fspath(path)
        self.immutable = bool(immutable)
        self.read_only = bool(read_only) or self.immutable
        if os.path.isdir(self.path):  # a directory (e.g. pytest's tmp_path) holds the store as events.db
            self.path = os.path.join(self.path, DEFAULT_FILE_NAME)
        level = str(synchronous).upper()
        if level not in SYNCHRONOUS_LEVELS:
            raise AgentError(f"synchronous must be one of {SYNCHRONOUS_LEVELS}, got {synchronous!r}", code="invalid-argument")
        self.synchronous = level
        if isinstance(busy_timeout, bool) or not isinstance(busy_timeout, (int, float)) or not 0 <= busy_timeout <= 3600:
            raise AgentError(f"busy_timeout must be seconds in [0, 3600], got {busy_timeout!r}", code="invalid-argument")
        self.busy_timeout = float(busy_timeout)
        self.table = check_identifier(table, "table")
        low, high = _check_poll(watch_poll)
        self.watch_poll = (low, high)
        self._executor: ThreadPoolExecutor | None = None
        self._executor_lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None  # touched only on the worker thread
        self._closed = False

    def __repr__(self) -> str:
        mode = ", immutable=True" if self.immutable else ", read_only=True" if self.read_only else ""
        return f"SqliteEventLogStore({self.path!r}, synchronous={self.synchronous!r}{mode})"

    # --- plumbing: one worker thread, one connection, one place for driver errors -------------------

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        with self._executor_lock:
            if self._closed:
                raise AgentStoreError(f"{self!r} is closed")
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agent-explorer-sqlite")
            executor = self._executor
        return await asyncio.get_running_loop().run_in_executor(executor, fn, *args)

    @contextlib.contextmanager
    def _translate(self, what: str, on_unique: Callable[[sqlite3.IntegrityError], Exception] | None = None) -> Iterator[None]:
        """Map sqlite3 errors to the package's errors; the only place this module catches them."""
        try:
            yield
        except sqlite3.IntegrityError as error:
            if on_unique is not None and "UNIQUE" in str(error):
                raise on_unique(error) from error
            raise AgentStoreError(f"SQLite refused {what} in {self.path}: {error}") from error
        except sqlite3.OperationalError as error:
            code = getattr(error, "sqlite_errorcode", None)
            if code is not None and code & 0xFF in _BUSY_CODES:
                raise AgentStoreBusyError(
                    f"SQLite file {self.path} stayed locked by another writer for more than "
                    f"{self.busy_timeout:g}s during {what}; nothing was written, retry later"
                ) from error
            raise AgentStoreError(f"SQLite failed during {what} on {self.path}: {error}") from error
        except sqlite3.Error as error:
            raise AgentStoreError(f"SQLite failed during {what} on {self.path}: {error}") from error

    def _connection(self) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        try:
            kind = not_a_regular_file(os.stat(self.path).st_mode)  # a FIFO would hang the first read
        except OSError:
            kind = None  # missing (created, or refused read-only, below)
        if kind is not None:
            raise AgentError(f"SQLite store {self.path} is {kind}, not a database file", code="invalid-argument")
        with self._translate("open"):
            if self.read_only:
                conn = self._connect_read_only()
            else:
                conn = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False)
            try:
                conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
                if self.read_only:
                    self._open_read_only(conn)
                    self._conn = conn
                    return conn
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if mode.lower() not in ("wal", "memory"):
                    raise AgentStoreError(f"SQLite file {self.path} cannot use WAL mode (got journal_mode={mode})")
                conn.execute(f"PRAGMA synchronous = {self.synchronous}")
                exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (self.table,)).fetchone()
                if not exists:
                    conn.execute("BEGIN IMMEDIATE")
                    try:
                        conn.execute(
                            f'CREATE TABLE IF NOT EXISTS "{self.table}" ('
                            " thread_id TEXT NOT NULL, idx INTEGER NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL,"
                            " PRIMARY KEY (thread_id, idx), UNIQUE (thread_id, id)) STRICT"
                        )
                        conn.execute("COMMIT")
                    except BaseException:
                        conn.execute("ROLLBACK")
                        raise
            except BaseException:
                conn.close()
                raise
        self._conn = conn
        return conn

    def _connect_read_only(self) -> sqlite3.Connection:
        """A connection SQLite itself keeps from writing (`mode=ro`): a read-only store's, or a watcher's."""
        uri = f"file:{urllib.parse.quote(os.path.abspath(self.path))}?mode=ro" + ("&immutable=1" if self.immutable else "")
        return sqlite3.connect(uri, uri=True, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False)

    def _open_read_only(self, conn: sqlite3.Connection) -> None:
        """Read-only: no pragma that writes, no DDL in the file; a file without the table reads as
        empty (an empty TEMP table of the same name stands in, in the connection's own temp space)."""
        exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (self.table,)).fetchone()
        if not exists:
            conn.execute(
                f'CREATE TEMP TABLE "{self.table}" (thread_id TEXT NOT NULL, idx INTEGER NOT NULL, id TEXT NOT NULL,'
                " body TEXT NOT NULL, PRIMARY KEY (thread_id, idx))"
            )

    def _refuse_writes(self, what: str) -> None:
        if self.read_only:
            raise AgentStoreError(f"{self!r} is opened read-only; {what} is refused (open it without read_only to write)",
                                  code="store-read-only")

    @contextlib.contextmanager
    def _write_transaction(self, conn: sqlite3.Connection) -> Iterator[None]:
        conn.execute("BEGIN IMMEDIATE")  # the write lock up front: the length we read stays true
        try:
            yield
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _length_in(self, conn: sqlite3.Connection, thread_id: str) -> int:
        top = conn.execute(f'SELECT max(idx) FROM "{self.table}" WHERE thread_id = ?', (thread_id,)).fetchone()[0]
        return 0 if top is None else top + 1

    # --- the contract --------------------------------------------------------------------------------

    async def append(self, *, thread_id: str, expected_index: int, entries: Sequence[Any]) -> int:
        thread_id, expected_index, prepared = prepare_batch(thread_id, expected_index, entries)
        self._refuse_writes(f"append to thread {thread_id!r}")
        return await self._run(self._append, thread_id, expected_index, prepared)

    def _append(self, thread_id: str, expected_index: int, prepared: list[PreparedEntry]) -> int:
        conn = self._connection()

        def duplicate(_error: sqlite3.IntegrityError) -> Exception:
            ids = [entry.id for entry in prepared]
            try:  # name the first id already taken, if the file still answers
                taken = {row[0] for row in conn.execute(
                    f'SELECT id FROM "{self.table}" WHERE thread_id = ? AND id IN (SELECT value FROM json_each(?))',
                    (thread_id, _json_list(ids)),
                )}
            except sqlite3.Error:
                taken = set()
            first = next((entry for entry in prepared if entry.id in taken), prepared[0])
            return duplicate_id_error(thread_id, first.id, first.index)

        with self._translate(f"append to thread {thread_id!r}", on_unique=duplicate):
            with self._write_transaction(conn):
                length = self._length_in(conn, thread_id)
                if length != expected_index:
                    raise AgentEventLogConflictError(thread_id, expected_index, length)
                if not prepared:
                    return length
                conn.executemany(
                    f'INSERT INTO "{self.table}" (thread_id, idx, id, body) VALUES (?, ?, ?, ?)',
                    [(thread_id, entry.index, entry.id, entry.text) for entry in prepared],
                )
            return expected_index + len(prepared)

    async def read_raw(
        self, thread_id: str, from_index: int = 0, to_index: int | None = None, *, limit: int | None = None
    ) -> list[str]:
        thread_id, start, stop = check_read(thread_id, from_index, to_index, limit)
        return await self._run(self._read, thread_id, start, stop, False)

    async def read(
        self, thread_id: str, from_index: int = 0, to_index: int | None = None, *, limit: int | None = None
    ) -> list[dict[str, Any]]:
        thread_id, start, stop = check_read(thread_id, from_index, to_index, limit)
        # Parse on the worker thread too: a 100k-entry read must not stall the event loop.
        return await self._run(self._read, thread_id, start, stop, True)

    def _read(self, thread_id: str, start: int, stop: int | None, parse: bool) -> list[Any]:
        conn = self._connection()
        if stop is None:
            query = f'SELECT idx, body FROM "{self.table}" WHERE thread_id = ? AND idx >= ? ORDER BY idx'
            params: tuple[Any, ...] = (thread_id, start)
        else:
            query = f'SELECT idx, body FROM "{self.table}" WHERE thread_id = ? AND idx >= ? AND idx < ? ORDER BY idx'
            params = (thread_id, start, stop)
        try:
            with self._translate(f"read of thread {thread_id!r}"):
                rows = conn.execute(query, params).fetchall()
        except AgentStoreError as error:
            if not _is_bad_utf8(error.__cause__):
                raise
            rows = self._rows_as_bytes(query, params)  # name the row; never quote its text
        return parse_stored_rows(f"thread {thread_id!r} in {self.path}", start, rows, raw=not parse)

    def _rows_as_bytes(self, query: str, params: tuple[Any, ...]) -> list[tuple[Any, Any]]:
        """The rows again with TEXT as bytes (the error path of a body that is not UTF-8): valid UTF-8 becomes
        str again, the rest stays bytes, which the row check refuses by index without printing it."""
        conn = self._connection()
        conn.text_factory = bytes
        try:
            with self._translate("read"):
                rows = conn.execute(query.replace("SELECT idx, body", "SELECT idx, body, typeof(body)", 1), params).fetchall()
        finally:
            conn.text_factory = str
        return [(idx, _text_or_raw(body) if kind == b"text" else body) for idx, body, kind in rows]

    async def length(self, thread_id: str) -> int:
        thread_id = check_thread_id(thread_id)
        return await self._run(self._length, thread_id)

    def _length(self, thread_id: str) -> int:
        conn = self._connection()
        with self._translate(f"length of thread {thread_id!r}"):
            return self._length_in(conn, thread_id)

    async def fork(self, *, thread_id: str, new_thread_id: str, up_to_index: int) -> int:
        thread_id, new_thread_id, up_to_index = check_fork(thread_id, new_thread_id, up_to_index)
        self._refuse_writes(f"fork of thread {thread_id!r}")
        return await self._run(self._fork, thread_id, new_thread_id, up_to_index)

    def _fork(self, thread_id: str, new_thread_id: str, up_to_index: int) -> int:
        conn = self._connection()
        with self._translate(f"fork of thread {thread_id!r} onto {new_thread_id!r}"):
            with self._write_transaction(conn):
                length = self._length_in(conn, thread_id)
                check_fork_range(thread_id, up_to_index, length)
                taken = self._length_in(conn, new_thread_id)
                if taken:
                    raise AgentEventLogConflictError(new_thread_id, 0, taken)
                conn.execute(
                    f'INSERT INTO "{self.table}" (thread_id, idx, id, body) '
                    f'SELECT ?, idx, id, body FROM "{self.table}" WHERE thread_id = ? AND idx < ? ORDER BY idx',
                    (new_thread_id, thread_id, up_to_index),
                )
            return up_to_index

    async def list_threads(self, *, limit: int = 100, offset: int = 0) -> list[ThreadInfo]:
        limit, offset = check_page(limit, offset)
        return await self._run(self._list_threads, limit, offset)

    def _list_threads(self, limit: int, offset: int) -> list[ThreadInfo]:
        conn = self._connection()
        table = self.table
        # A loose index scan: hop from one thread id to the next through the primary key, so the
        # cost grows with the number of threads, not of entries.
        sql = (
            f'WITH RECURSIVE ids(tid) AS ('
            f' SELECT (SELECT min(thread_id) FROM "{table}")'
            f' UNION ALL SELECT (SELECT min(thread_id) FROM "{table}" WHERE thread_id > ids.tid) FROM ids'
            f' WHERE ids.tid IS NOT NULL)'
            f' SELECT tid, (SELECT max(idx) FROM "{table}" WHERE thread_id = ids.tid) + 1 FROM ids'
            f' WHERE tid IS NOT NULL LIMIT ? OFFSET ?'
        )
        try:
            with self._translate("list of threads"):
                return [ThreadInfo(tid, length) for tid, length in conn.execute(sql, (limit, offset))]
        except AgentStoreError as error:
            if not _is_bad_utf8(error.__cause__):
                raise
        # A thread id stored as text that is not UTF-8 (written outside the package): listed raw, never quoted
        # in an error; reading it is refused like any id that is not a str.
        conn.text_factory = bytes
        try:
            with self._translate("list of threads"):
                rows = conn.execute(sql, (limit, offset)).fetchall()
        finally:
            conn.text_factory = str
        return [ThreadInfo(_text_or_raw(tid) if isinstance(tid, bytes) else tid, length) for tid, length in rows]

    async def thread_heads(self, thread_ids: Iterable[str] | None = None) -> list[ThreadHead]:
        wanted = None if thread_ids is None else check_thread_ids(thread_ids)
        return await self._run(self._thread_heads, wanted)

    def _thread_heads(self, wanted: list[str] | None) -> list[ThreadHead]:
        conn = self._connection()
        table = self.table
        # One query: each thread's last index and row count from the primary key's index alone, then one index
        # probe for the last row's body (as bytes: hashed as stored, never decoded). 100,000 threads: ~0.4 s.
        if wanted is None:
            heads = f'SELECT thread_id AS tid, max(idx) AS top, count(*) AS n FROM "{table}" GROUP BY thread_id'
            params: tuple[Any, ...] = ()
        else:
            heads = (f'SELECT ids.value AS tid, (SELECT max(idx) FROM "{table}" WHERE thread_id = ids.value) AS top,'
                     f' (SELECT count(*) FROM "{table}" WHERE thread_id = ids.value) AS n FROM json_each(?) AS ids')
            params = (_json_list(wanted),)
        sql = (f'SELECT h.tid, h.top, h.n, (SELECT CAST(body AS BLOB) FROM "{table}" WHERE thread_id = h.tid'
               f' AND idx = h.top) FROM ({heads}) AS h WHERE h.top IS NOT NULL')
        try:
            with self._translate("read of the thread heads"):
                rows = conn.execute(sql, params).fetchall()
        except AgentStoreError as error:
            if not _is_bad_utf8(error.__cause__):
                raise
            conn.text_factory = bytes  # a thread id that is not UTF-8 (as in list_threads): kept raw
            try:
                with self._translate("read of the thread heads"):
                    rows = [(_text_or_raw(tid) if isinstance(tid, bytes) else tid, top, n, body)
                            for tid, top, n, body in conn.execute(sql, params)]
            finally:
                conn.text_factory = str
        found = [ThreadHead(tid, top + 1, n, head_digest(body if isinstance(body, bytes) else str(body)))
                 for tid, top, n, body in rows]
        try:  # ordered by id here, not in SQL: an ORDER BY there costs a temporary b-tree
            found.sort(key=lambda head: head.thread_id)
        except TypeError:  # raw ids beside text ones: both in UTF-8 byte order
            found.sort(key=lambda head: head.thread_id.encode("utf-8") if isinstance(head.thread_id, str)
                       else bytes(head.thread_id))
        return found

    def _watch_wakeup(self, thread_id: str) -> WakeUp:
        return _DataVersionPoll(self)

    def _store_wakeup(self) -> WakeUp:
        return _DataVersionPoll(self)  # data_version changes on any commit: one poll serves the whole store

    async def aclose(self) -> None:
        await super().aclose()
        with self._executor_lock:
            if self._closed:
                return
            self._closed = True  # new calls are refused from here; calls already queued still run
            executor, self._executor = self._executor, None
        if executor is not None:
            await asyncio.get_running_loop().run_in_executor(executor, self._close_connection)
            executor.shutdown(wait=True)

    def _close_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with self._translate("close"):
                conn.close()


def _is_bad_utf8(error: BaseException | None) -> bool:
    return isinstance(error, sqlite3.OperationalError) and "decode to UTF-8" in str(error)


def _text_or_raw(body: bytes) -> Any:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return NotUtf8Text(body)


def _json_list(values: list[str]) -> str:
    import orjson

    return orjson.dumps(values).decode("utf-8")



def _check_poll(value: Any) -> tuple[float, float]:
    try:
        low, high = value
    except (TypeError, ValueError):
        low = high = None
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (low, high)) or not 0 < low <= high <= 60:
        raise AgentError(f"watch_poll must be (shortest, longest) seconds with 0 < shortest <= longest <= 60, got {value!r}", code="invalid-argument")
    return float(low), float(high)


class _DataVersionPoll(PollWakeUp):
    """A watcher's own read-only connection, on a thread of its own, polling `PRAGMA data_version`.

    data_version is per connection and changes when any *other* connection commits, so this one
    (which never writes) sees the store's own appends and other processes' alike. Each poll is a
    read transaction of a few microseconds; nothing is held between polls.
    """

    def __init__(self, store: SqliteEventLogStore) -> None:
        super().__init__(*store.watch_poll)  # the backoff between polls: PollWakeUp's
        self._store = store
        self._executor: ThreadPoolExecutor | None = None
        self._conn: sqlite3.Connection | None = None
        self._version: int | None = None

    async def _call(self, fn: Callable[[], T]) -> T:
        assert self._executor is not None
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn)

    async def open(self) -> None:
        # The store's own connection first: it creates the file and table (unless read-only), so the
        # watcher's read-only connection finds them.
        await self._store._run(self._store._connection)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agent-explorer-sqlite-watch")
        self._version = await self._call(self._open)

    def _open(self) -> int:
        store = self._store
        with store._translate("opening a watch connection"):
            self._conn = store._connect_read_only()
            return self._poll()

    def _poll(self) -> int:
        assert self._conn is not None
        with self._store._translate("a watch poll"):
            return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    async def wait(self) -> None:
        while True:
            version = await self._call(self._poll)
            if version != self._version:
                self._version = version
                return
            await super().wait()

    async def close(self) -> None:
        executor, self._executor = self._executor, None
        if executor is None:
            return
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await asyncio.get_running_loop().run_in_executor(executor, conn.close)
        executor.shutdown(wait=False)
