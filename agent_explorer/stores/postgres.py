"""The PostgreSQL event-log store: the same contract as SQLite, shared by many hosts (psycopg 3, async pool).

Entries are `text` holding the exact JSON appended (never `jsonb`, which reorders keys, drops duplicate
keys and refuses `\\u0000`), so a read hashes exactly as written. The primary key `(thread_id, idx)`
decides every race; driver errors are translated in one place (`_translate`), and this module never
lets a raw psycopg exception reach a caller.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import math
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable, Sequence
from typing import Any, TypeVar

import psycopg
import psycopg_pool
from psycopg import errors as pg_errors
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from ..errors import (
    AgentError,
    AgentEventLogConflictError,
    AgentStoreBusyError,
    AgentStoreError,
)
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
    parse_stored_rows,
    prepare_batch,
)
from .pg_listen import ListenWakeUp, channel_for, store_channel_for
from .portal import Portal
from .watching import WakeUp

__all__ = ["PostgresEventLogStore"]

T = TypeVar("T")

# Reads larger than this are parsed on a worker thread so the event loop keeps serving.
_PARSE_OFF_LOOP = 2000
_BUSY = (
    pg_errors.LockNotAvailable,
    pg_errors.QueryCanceled,
    pg_errors.SerializationFailure,
    pg_errors.DeadlockDetected,
    pg_errors.TooManyConnections,
)


class PostgresEventLogStore(EventLogStore):
    """An event-log store in a PostgreSQL table, for logs shared across hosts.

    `schema`/`table` (validated identifiers) name where entries live; the first use creates them
    if missing (`create ... if not exists` under an advisory lock, so concurrent first uses agree),
    and skips creation entirely when the table exists (a read-only role can open a production log).

    Appends are one statement: an `INSERT ... SELECT` over `unnest` of the batch's ids and texts
    that inserts only if the entry before `expected_index` exists; the primary key then gives each
    position exactly one winner, and a loser's UniqueViolation becomes AgentEventLogConflictError
    with the thread's actual length. Batch parameters go as binary arrays (`param_format="binary"`,
    the default); `"text"` exists to measure the difference. `fork` is one `INSERT ... SELECT`.

    By default the pool and all queries run on a loop thread owned by the store, so one store
    serves callers on any event loop (Jupyter's, `asyncio.run` per call, the `sync` facade) at the
    cost of a thread hop per call (~0.1-0.4 ms here). A server running one event loop can pass
    `dedicated_loop=False` to keep the pool on its own loop and skip the hop; the store then refuses
    calls from any other loop.

    Watching: every append (and fork) calls `pg_notify` on its thread's channel (a hash of table and
    thread id) in the same statement, so a notification is never delivered before its commit. A
    watcher LISTENs on a dedicated connection (one per watcher, outside the pool); when that
    connection drops it polls (0.1 s growing to 1 s) while reconnecting, and reads that fail because
    the server is gone are retried for `watch_reconnect_timeout` seconds (default 120) before the
    watch raises.
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "agent_explorer",
        table: str = "agent_event_log",
        min_size: int = 1,
        max_size: int = 10,
        timeout: float = 30.0,
        param_format: str = "binary",
        migrate: bool = True,
        dedicated_loop: bool = True,
        connect_kwargs: dict[str, Any] | None = None,
        watch_reconnect_timeout: float = 120.0,
    ) -> None:
        if not isinstance(dsn, str) or not dsn:
            raise AgentError(f"dsn must be a non-empty connection string, got {dsn!r:.80}", code="invalid-argument")
        self.dsn = dsn
        self.schema = check_identifier(schema, "schema")
        self.table = check_identifier(table, "table")
        if param_format not in ("binary", "text"):
            raise AgentError(f"param_format must be 'binary' or 'text', got {param_format!r}", code="invalid-argument")
        self.param_format = param_format
        if not (type(min_size) is int and type(max_size) is int and 0 <= min_size <= max_size and max_size >= 1):
            raise AgentError(f"pool sizes must be ints with 0 <= min_size <= max_size, max_size >= 1; got {min_size}, {max_size}", code="invalid-argument")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise AgentError(f"timeout must be positive seconds, got {timeout!r}", code="invalid-argument")
        self._min_size, self._max_size, self._timeout = min_size, max_size, float(timeout)
        if isinstance(watch_reconnect_timeout, bool) or not isinstance(watch_reconnect_timeout, (int, float)) or watch_reconnect_timeout < 0:
            raise AgentError(f"watch_reconnect_timeout must be seconds >= 0, got {watch_reconnect_timeout!r}", code="invalid-argument")
        self.watch_reconnect_timeout = float(watch_reconnect_timeout)
        self._migrate = migrate
        # Extra psycopg connection options, e.g. {"prepare_threshold": None} behind a pgbouncer in
        # transaction mode; autocommit stays on (each append is one statement).
        self._connect_kwargs = {**(connect_kwargs or {}), "autocommit": True}
        self._connect_kwargs.setdefault("application_name", "agent_explorer")
        self._pool: psycopg_pool.AsyncConnectionPool | None = None
        # By default the pool and every query live on this store's own loop thread, so the store
        # works from any event loop (asyncio.run per call, Jupyter's loop, several loops at once).
        self._io: Portal | None = Portal(name="agent-explorer-postgres") if dedicated_loop else None
        self._home_loop: asyncio.AbstractEventLoop | None = None
        self._opening: asyncio.Lock | None = None
        self._closed = False
        self._build_statements()

    def __repr__(self) -> str:
        return f"PostgresEventLogStore(<dsn>, schema={self.schema!r}, table={self.table!r})"

    @property
    def qualified_table(self) -> str:
        return f"{self.schema}.{self.table}"

    def _build_statements(self) -> None:
        t = sql.Identifier(self.schema, self.table)
        f = "b" if self.param_format == "binary" else "t"
        p = {name: sql.Placeholder(name, f) for name in ("thread", "expected", "ids", "bodies", "new", "up", "start", "stop", "channel", "store_channel")}
        # The append notifies the thread's channel in the same statement (so in the same transaction):
        # the notification is delivered only once the entries are committed and visible, never before.
        self._sql_append = sql.SQL(
            "WITH ins AS (INSERT INTO {t} (thread_id, idx, id, body)"
            " SELECT {thread}, {expected}::bigint + u.ord - 1, u.id, u.body"
            " FROM unnest({ids}::text[], {bodies}::text[]) WITH ORDINALITY AS u(id, body, ord)"
            " WHERE {expected}::bigint = 0"
            " OR EXISTS (SELECT 1 FROM {t} WHERE thread_id = {thread} AND idx = {expected}::bigint - 1)"
            " RETURNING 1)"
            " SELECT c.n FROM (SELECT count(*) AS n FROM ins) c"
            " WHERE c.n > 0 AND pg_notify({channel}, ({expected}::bigint + c.n)::text) IS NOT NULL"
            " AND pg_notify({store_channel}, {thread}) IS NOT NULL"
        ).format(t=t, **p)
        self._sql_length = sql.SQL("SELECT max(idx) FROM {t} WHERE thread_id = {thread}").format(t=t, **p)
        self._sql_read = sql.SQL(
            "SELECT idx, body FROM {t} WHERE thread_id = {thread} AND idx >= {start}::bigint ORDER BY idx"
        ).format(t=t, **p)
        self._sql_read_window = sql.SQL(
            "SELECT idx, body FROM {t} WHERE thread_id = {thread} AND idx >= {start}::bigint AND idx < {stop}::bigint ORDER BY idx"
        ).format(t=t, **p)
        self._sql_taken_ids = sql.SQL(
            "SELECT id FROM {t} WHERE thread_id = {thread} AND id = ANY({ids}::text[])"
        ).format(t=t, **p)
        self._sql_fork = sql.SQL(
            "WITH ins AS (INSERT INTO {t} (thread_id, idx, id, body)"
            " SELECT {new}, idx, id, body FROM {t} WHERE thread_id = {thread} AND idx < {up}::bigint"
            " AND EXISTS (SELECT 1 FROM {t} WHERE thread_id = {thread} AND idx = {up}::bigint - 1)"
            " AND NOT EXISTS (SELECT 1 FROM {t} WHERE thread_id = {new})"
            " RETURNING 1)"
            " SELECT c.n FROM (SELECT count(*) AS n FROM ins) c"
            " WHERE c.n > 0 AND pg_notify({channel}, c.n::text) IS NOT NULL"
            " AND pg_notify({store_channel}, {new}) IS NOT NULL"
        ).format(t=t, **p)
        self._sql_threads = sql.SQL(
            "WITH RECURSIVE ids(tid) AS ("
            " (SELECT thread_id FROM {t} ORDER BY thread_id LIMIT 1)"
            " UNION ALL SELECT (SELECT thread_id FROM {t} WHERE thread_id > ids.tid ORDER BY thread_id LIMIT 1)"
            " FROM ids WHERE ids.tid IS NOT NULL)"
            " SELECT tid, (SELECT max(idx) FROM {t} WHERE thread_id = ids.tid) + 1 FROM ids"
            " WHERE tid IS NOT NULL LIMIT %(limit)s OFFSET %(offset)s"
        ).format(t=t)
        # The heads: each thread's last index and row count from the primary key's index, then one index probe per
        # thread for the last row, whose text the server hashes (32 bytes travel per thread, not the text). A join
        # instead makes the planner scan every row of the table (100,000 threads: 1.2-1.3 s, against 0.95 s).
        self._sql_heads = sql.SQL(
            "SELECT h.thread_id, h.top, h.n, (SELECT sha256(convert_to(b.body, 'UTF8')) FROM {t} b"
            " WHERE b.thread_id = h.thread_id AND b.idx = h.top) FROM"
            " (SELECT thread_id, max(idx) AS top, count(*) AS n FROM {t} GROUP BY thread_id) h ORDER BY h.thread_id"
        ).format(t=t)
        self._sql_heads_of = sql.SQL(
            "SELECT u.tid, h.top, h.n, sha256(convert_to(b.body, 'UTF8')) FROM unnest({ids}::text[]) AS u(tid)"
            " CROSS JOIN LATERAL (SELECT max(idx) AS top, count(*) AS n FROM {t} WHERE thread_id = u.tid) h"
            " JOIN {t} b ON b.thread_id = u.tid AND b.idx = h.top ORDER BY u.tid COLLATE \"C\""
        ).format(t=t, **p)
        self._sql_create = [
            sql.SQL("CREATE SCHEMA IF NOT EXISTS {s}").format(s=sql.Identifier(self.schema)),
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {t} ("
                " thread_id text COLLATE \"C\" NOT NULL,"
                " idx bigint NOT NULL CHECK (idx >= 0),"
                " id text NOT NULL,"
                " body text NOT NULL,"
                " CONSTRAINT {pk} PRIMARY KEY (thread_id, idx),"
                " CONSTRAINT {uq} UNIQUE (thread_id, id))"
            ).format(t=t, pk=sql.Identifier(f"{self.table}_pkey"), uq=sql.Identifier(f"{self.table}_id_key")),
        ]

    # --- plumbing: the pool, migrations, and the one place for driver errors -----------------------

    @contextlib.asynccontextmanager
    async def _translate(
        self, what: str, on_unique: Callable[[pg_errors.UniqueViolation], Awaitable[Exception]] | None = None
    ) -> AsyncIterator[None]:
        """Map psycopg errors to the package's errors; the only place this module catches them."""
        try:
            yield
        except pg_errors.UniqueViolation as error:
            if on_unique is None:
                raise AgentStoreError(f"PostgreSQL refused {what} in {self.qualified_table}: {error}") from error
            raise (await on_unique(error)) from error
        except _BUSY as error:
            raise AgentStoreBusyError(
                f"PostgreSQL could not take a lock or finish {what} on {self.qualified_table} in time "
                f"({type(error).__name__}: {error}); nothing was written, retry later"
            ) from error
        except psycopg_pool.PoolTimeout as error:
            raise AgentStoreBusyError(
                f"no PostgreSQL connection became free for {what} within {self._timeout:g}s "
                f"({error}); retry later or raise max_size"
            ) from error
        except (psycopg.Error, psycopg_pool.PoolClosed) as error:
            raise AgentStoreError(f"PostgreSQL failed during {what} on {self.qualified_table}: {error}") from error

    async def _get_pool(self) -> psycopg_pool.AsyncConnectionPool:
        """The pool, opened (and the table created) on first use; runs on the store's own loop."""
        if self._pool is not None:
            return self._pool
        if self._closed:  # never reopen a pool for a call that raced with aclose
            raise AgentStoreError(f"{self!r} is closed")
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            if self._pool is None:
                await self._probe()
                pool = psycopg_pool.AsyncConnectionPool(
                    self.dsn,
                    open=False,
                    kwargs=self._connect_kwargs,
                    name=f"agent_explorer:{self.qualified_table}",
                    min_size=self._min_size,
                    max_size=self._max_size,
                    timeout=self._timeout,
                )
                try:
                    async with self._translate("connect"):
                        try:
                            await pool.open(wait=True, timeout=self._timeout)
                        except psycopg_pool.PoolTimeout as error:
                            raise psycopg.OperationalError(f"cannot connect to the server: {error}") from error
                        if self._migrate:
                            await self._create_tables(pool)
                except BaseException:
                    await pool.close()
                    raise
                if self._closed:  # aclose ran while we connected: do not leak this pool
                    await pool.close()
                    raise AgentStoreError(f"{self!r} is closed")
                self._pool = pool
        return self._pool

    async def _probe(self) -> None:
        """One direct connection before the pool opens, so a server that refuses or is not there is reported at
        once with its host and port. The pool alone retries in the background and, after `timeout` seconds, says
        only "pool initialization incomplete". The message never carries the DSN (it may hold a password)."""
        params = conninfo_to_dict(self.dsn)
        options = dict(self._connect_kwargs)
        if "connect_timeout" not in params:  # libpq's default is to wait as long as the OS does
            options["connect_timeout"] = max(1, math.ceil(self._timeout))
        try:
            conn = await psycopg.AsyncConnection.connect(self.dsn, **options)
        except psycopg.OperationalError as error:
            host = params.get("host") or os.environ.get("PGHOST") or "localhost (the local socket)"
            port = params.get("port") or os.environ.get("PGPORT") or "5432"
            first = (str(error).strip().splitlines() or [type(error).__name__])[0]
            reason = first.rsplit("failed: ", 1)[-1].strip() or first
            raise AgentStoreError(
                f"cannot connect to PostgreSQL at host {host}, port {port}: {_lower_first_word(reason)}"
            ) from error
        await conn.close()

    async def _create_tables(self, pool: psycopg_pool.AsyncConnectionPool) -> None:
        async with pool.connection() as conn:
            cur = await conn.execute("SELECT to_regclass(%s)", [sql.Identifier(self.schema, self.table).as_string(conn)])
            if (await cur.fetchone())[0] is not None:  # type: ignore[index]
                return
            async with conn.transaction():
                # Concurrent first uses would race in the catalogs; one advisory lock orders them.
                await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"agent_explorer:{self.qualified_table}"])
                for statement in self._sql_create:
                    await conn.execute(statement)

    async def _length_on(self, conn: psycopg.AsyncConnection[Any], thread_id: str) -> int:
        cur = await conn.execute(self._sql_length, {"thread": thread_id})
        top = (await cur.fetchone())[0]  # type: ignore[index]
        return 0 if top is None else int(top) + 1

    # --- the contract --------------------------------------------------------------------------------

    async def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run one operation on the store's loop and await it from the caller's loop."""
        if self._closed:
            coro.close()
            raise AgentStoreError(f"{self!r} is closed")
        if self._io is not None:
            try:
                future = self._io.submit(coro)
            except RuntimeError:  # closed between the check above and now
                raise AgentStoreError(f"{self!r} is closed") from None
            try:
                return await asyncio.wrap_future(future)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if self._closed and future.cancelled() and not (task is not None and task.cancelling()):
                    raise AgentStoreError(f"{self!r} was closed while this call ran") from None
                raise
        loop = asyncio.get_running_loop()
        if self._home_loop is None:
            self._home_loop = loop
        elif self._home_loop is not loop:
            coro.close()
            raise AgentStoreError(
                f"{self!r} was created with dedicated_loop=False and first used on another event loop; "
                "its pool cannot move between loops (use the default dedicated_loop=True)"
            )
        return await coro

    async def append(self, *, thread_id: str, expected_index: int, entries: Sequence[Any]) -> int:
        thread_id, expected_index, prepared = prepare_batch(thread_id, expected_index, entries)
        return await self._run(self._append(thread_id, expected_index, prepared))

    async def _append(self, thread_id: str, expected_index: int, prepared: list[PreparedEntry]) -> int:
        pool = await self._get_pool()
        async with self._translate(f"append to thread {thread_id!r}"), pool.connection() as conn:
            return await self._append_on(conn, thread_id, expected_index, prepared)

    async def _append_on(
        self, conn: psycopg.AsyncConnection[Any], thread_id: str, expected_index: int, prepared: list[PreparedEntry]
    ) -> int:
        async def unique_violation(error: pg_errors.UniqueViolation) -> Exception:
            # The primary key decides races: the position is taken, so report the true length. A
            # clash on (thread_id, id) at the right length is a duplicate id instead.
            async with self._translate(f"diagnosis of a refused append to {thread_id!r}"):
                length = await self._length_on(conn, thread_id)
                if length != expected_index or error.diag.constraint_name != f"{self.table}_id_key":
                    return AgentEventLogConflictError(thread_id, expected_index, length)
                cur = await conn.execute(self._sql_taken_ids, {"thread": thread_id, "ids": [e.id for e in prepared]})
                taken = {row[0] for row in await cur.fetchall()}
            first = next((entry for entry in prepared if entry.id in taken), prepared[0])
            return duplicate_id_error(thread_id, first.id, first.index)

        async with self._translate(f"append to thread {thread_id!r}", on_unique=unique_violation):
            if not prepared:
                length = await self._length_on(conn, thread_id)
                if length != expected_index:
                    raise AgentEventLogConflictError(thread_id, expected_index, length)
                return length
            params = {
                "thread": thread_id,
                "expected": expected_index,
                "ids": [entry.id for entry in prepared],
                "bodies": [entry.text for entry in prepared],
                "channel": channel_for(self.qualified_table, thread_id),
                "store_channel": store_channel_for(self.qualified_table),
            }
            for _attempt in range(3):
                cur = await conn.execute(self._sql_append, params)
                if cur.rowcount == 1:  # one row: the batch went in whole (and its NOTIFY with it)
                    return expected_index + len(prepared)
                # Nothing inserted: the entry before expected_index is missing (a gap), unless it
                # landed between our statement's snapshot and now, in which case we try again.
                length = await self._length_on(conn, thread_id)
                if length != expected_index:
                    raise AgentEventLogConflictError(thread_id, expected_index, length)
            raise AgentEventLogConflictError(thread_id, expected_index, await self._length_on(conn, thread_id))

    async def read_raw(
        self, thread_id: str, from_index: int = 0, to_index: int | None = None, *, limit: int | None = None
    ) -> list[str]:
        thread_id, start, stop = check_read(thread_id, from_index, to_index, limit)
        return await self._checked(thread_id, start, await self._run(self._read_rows(thread_id, start, stop)), raw=True)

    async def _checked(self, thread_id: str, start: int, rows: list[tuple[Any, Any]], *, raw: bool) -> list[Any]:
        """Rows checked by the log reader's rules (another program may have written them), off the loop when many."""
        name = f"thread {thread_id!r} in {self.qualified_table}"
        if len(rows) > _PARSE_OFF_LOOP:
            return await asyncio.to_thread(parse_stored_rows, name, start, rows, raw=raw)
        return parse_stored_rows(name, start, rows, raw=raw)

    async def _read_rows(self, thread_id: str, start: int, stop: int | None) -> list[tuple[Any, Any]]:
        pool = await self._get_pool()
        async with self._translate(f"read of thread {thread_id!r}"):
            async with pool.connection() as conn:
                if stop is None:
                    cur = await conn.execute(self._sql_read, {"thread": thread_id, "start": start})
                else:
                    cur = await conn.execute(self._sql_read_window, {"thread": thread_id, "start": start, "stop": stop})
                rows = await cur.fetchall()
        return [(row[0], row[1]) for row in rows]

    async def read(
        self, thread_id: str, from_index: int = 0, to_index: int | None = None, *, limit: int | None = None
    ) -> list[dict[str, Any]]:
        thread_id, start, stop = check_read(thread_id, from_index, to_index, limit)
        return await self._checked(thread_id, start, await self._run(self._read_rows(thread_id, start, stop)), raw=False)

    async def length(self, thread_id: str) -> int:
        thread_id = check_thread_id(thread_id)
        return await self._run(self._length(thread_id))

    async def _length(self, thread_id: str) -> int:
        pool = await self._get_pool()
        async with self._translate(f"length of thread {thread_id!r}"):
            async with pool.connection() as conn:
                return await self._length_on(conn, thread_id)

    async def fork(self, *, thread_id: str, new_thread_id: str, up_to_index: int) -> int:
        thread_id, new_thread_id, up_to_index = check_fork(thread_id, new_thread_id, up_to_index)
        return await self._run(self._fork(thread_id, new_thread_id, up_to_index))

    async def _fork(self, thread_id: str, new_thread_id: str, up_to_index: int) -> int:
        pool = await self._get_pool()
        async with self._translate(f"fork of thread {thread_id!r}"), pool.connection() as conn:

            async def taken(_error: pg_errors.UniqueViolation) -> Exception:
                async with self._translate(f"diagnosis of a refused fork onto {new_thread_id!r}"):
                    return AgentEventLogConflictError(new_thread_id, 0, await self._length_on(conn, new_thread_id))

            async with self._translate(f"fork of thread {thread_id!r} onto {new_thread_id!r}", on_unique=taken):
                if up_to_index >= 1:
                    # One statement, one snapshot: a concurrent appender cannot tear the prefix.
                    cur = await conn.execute(self._sql_fork, {
                        "thread": thread_id, "new": new_thread_id, "up": up_to_index,
                        "channel": channel_for(self.qualified_table, new_thread_id),
                        "store_channel": store_channel_for(self.qualified_table),
                    })
                    row = await cur.fetchone()
                    if row is not None and row[0] == up_to_index:
                        return up_to_index
                length = await self._length_on(conn, thread_id)
                check_fork_range(thread_id, up_to_index, length)
                raise AgentEventLogConflictError(new_thread_id, 0, await self._length_on(conn, new_thread_id))

    async def list_threads(self, *, limit: int = 100, offset: int = 0) -> list[ThreadInfo]:
        limit, offset = check_page(limit, offset)
        return await self._run(self._list_threads(limit, offset))

    async def _list_threads(self, limit: int, offset: int) -> list[ThreadInfo]:
        pool = await self._get_pool()
        async with self._translate("list of threads"):
            async with pool.connection() as conn:
                cur = await conn.execute(self._sql_threads, {"limit": limit, "offset": offset})
                return [ThreadInfo(tid, int(length)) for tid, length in await cur.fetchall()]

    async def thread_heads(self, thread_ids: Iterable[str] | None = None) -> list[ThreadHead]:
        wanted = None if thread_ids is None else check_thread_ids(thread_ids)
        return await self._run(self._thread_heads(wanted))

    async def _thread_heads(self, wanted: list[str] | None) -> list[ThreadHead]:
        pool = await self._get_pool()
        async with self._translate("read of the thread heads"), pool.connection() as conn, conn.transaction():
            # A query this size crosses the JIT threshold, and compiling it costs more than it saves.
            await conn.execute("SET LOCAL jit = off")
            if wanted is None:
                cur = await conn.execute(self._sql_heads)
            else:
                cur = await conn.execute(self._sql_heads_of, {"ids": wanted})
            rows = await cur.fetchall()
        return [ThreadHead(tid, int(top) + 1, int(n), bytes(digest)) for tid, top, n, digest in rows
                if digest is not None]

    # --- watching: LISTEN/NOTIFY, reads retried through a lost server -------------------------------

    def _watch_wakeup(self, thread_id: str) -> WakeUp:
        return ListenWakeUp(self, thread_id)

    def _store_wakeup(self) -> WakeUp:
        """One LISTEN for the whole store: every append and fork also notifies the store's channel."""
        return ListenWakeUp(self, channel=store_channel_for(self.qualified_table))

    def _watch_retry_budget(self, error: Exception) -> float | None:
        """A lost connection or a pool with no live connection (a server restarting) is waited out
        for `watch_reconnect_timeout` seconds; anything else (a refused query) is raised at once."""
        cause: BaseException | None = error
        while cause is not None:
            if isinstance(cause, (psycopg.OperationalError, psycopg_pool.PoolTimeout)):
                return self.watch_reconnect_timeout
            cause = cause.__cause__
        return super()._watch_retry_budget(error)

    def _start_background(self, coro: Coroutine[Any, Any, None]) -> concurrent.futures.Future[None] | asyncio.Task[None]:
        """Run a long-lived coroutine (a watcher's listener) where the pool lives."""
        if self._closed:
            coro.close()
            raise AgentStoreError(f"{self!r} is closed")
        if self._io is not None:
            try:
                return self._io.submit(coro)
            except RuntimeError:
                raise AgentStoreError(f"{self!r} is closed") from None
        return asyncio.get_running_loop().create_task(coro)

    async def aclose(self) -> None:
        await super().aclose()
        if self._closed:
            return
        self._closed = True
        pool, self._pool = self._pool, None
        if self._io is None:
            if pool is not None:
                await pool.close()
            return
        if pool is not None:
            await self._io.call(pool.close())
        await asyncio.to_thread(self._io.close)


def _lower_first_word(reason: str) -> str:
    """'Connection refused' reads on after a colon as 'connection refused'; a word that is not capitalised prose
    ('FATAL:', 'SSL', 'PGSSLMODE') keeps its case rather than turning into 'fATAL:'."""
    word = reason.split(" ", 1)[0]
    if word[:1].isupper() and word[1:] == word[1:].lower():
        return reason[:1].lower() + reason[1:]
    return reason
