"""PostgreSQL wake-ups for `watch`: LISTEN on a thread's channel, with a poll fallback while reconnecting.

Each watcher holds one dedicated connection (never a pool connection: LISTEN is session state) on the
store's own loop, and turns every notification into a wake-up on the watcher's loop. It only listens:
it never writes, and never holds a transaction open.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import threading
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from .watching import WakeUp

if TYPE_CHECKING:
    from .postgres import PostgresEventLogStore

__all__ = ["channel_for", "ListenWakeUp", "POLL_WHILE_DOWN", "RECONNECT_MAX", "store_channel_for"]

POLL_WHILE_DOWN = (0.1, 1.0)  # seconds between reads while the listener is reconnecting: first, longest
RECONNECT_MAX = 2.0  # longest pause between two reconnect attempts
_KEEPALIVES = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3}


def channel_for(qualified_table: str, thread_id: str) -> str:
    """The NOTIFY channel of one thread: a hash, so any thread id (up to 1024 bytes, any text) gives a
    plain lowercase identifier well under PostgreSQL's 63-byte limit; the table is part of it, so two
    tables with the same thread ids never wake each other's watchers."""
    digest = hashlib.sha256(f"{qualified_table}\x00{thread_id}".encode()).hexdigest()
    return f"agent_explorer_{digest[:40]}"


def store_channel_for(qualified_table: str) -> str:
    """The NOTIFY channel of a whole store (every append and fork, with the thread id as payload), for one
    listener that follows every thread (`Runs(follow=True)`). No thread id is empty, so it is no thread's."""
    return channel_for(qualified_table, "")


def _settle(future: concurrent.futures.Future[None]) -> None:
    """Resolve `future` unless it already is (two threads may race to)."""
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        future.set_result(None)


class ListenWakeUp(WakeUp):
    """LISTEN while connected; while not (a dropped connection, a server restart), wake every
    0.1 s growing to 1 s so the watcher polls, and reconnect in the background. Each (re)connect
    wakes the watcher once, so whatever was committed while nobody listened is read."""

    def __init__(self, store: PostgresEventLogStore, thread_id: str = "", *, channel: str | None = None) -> None:
        self._store = store
        self._channel = channel if channel is not None else channel_for(store.qualified_table, thread_id)
        self._event = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._listening = False
        self._ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._finished: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._lock = threading.Lock()
        self._closing = False
        self._listener: tuple[asyncio.AbstractEventLoop, asyncio.Task[Any] | None] | None = None
        self._poll = POLL_WHILE_DOWN[0]
        # The payloads (thread ids, on the store's channel) since the last `changed()`; None: unknown (not yet
        # listening, or a reconnect may have missed some), so a whole-store watcher lists the store again.
        self._payloads: set[str] | None = None

    def changed(self) -> set[str] | None:
        with self._lock:
            payloads, self._payloads = self._payloads, (set() if self._listening else None)
        return payloads

    def _wake(self) -> None:
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the watcher's loop is gone
                loop.call_soon_threadsafe(self._event.set)

    async def open(self) -> None:
        self._loop = asyncio.get_running_loop()
        started = self._store._start_background(self._listen())
        # A listener that never gets to run (its loop closing first) must not leave open() waiting.
        started.add_done_callback(lambda _: _settle(self._ready))
        # The first LISTEN must be in place before the first read, or an append in between is missed;
        # if the server cannot be reached, the first read says so (and the listener keeps trying).
        await asyncio.wrap_future(self._ready)

    async def _listen(self) -> None:
        with self._lock:
            if self._closing:
                _settle(self._ready)
                return
            self._listener = (asyncio.get_running_loop(), asyncio.current_task())
        store = self._store
        given = {**conninfo_to_dict(store.dsn), **store._connect_kwargs}
        # Keepalives notice a server that vanished without closing the socket; the DSN's own win.
        kwargs: dict[str, Any] = {key: value for key, value in _KEEPALIVES.items() if key not in given}
        if "connect_timeout" not in given:
            kwargs["connect_timeout"] = max(int(store._timeout), 1)
        kwargs.update(store._connect_kwargs)
        kwargs["autocommit"] = True
        kwargs["application_name"] = f"{given.get('application_name', 'agent_explorer')}:watch"
        pause = 0.05
        try:
            while True:
                conn: psycopg.AsyncConnection[Any] | None = None
                try:
                    conn = await psycopg.AsyncConnection.connect(store.dsn, **kwargs)
                    await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self._channel)))
                    with self._lock:
                        self._payloads = None  # what was committed while nobody listened is unknown
                    self._listening = True
                    pause = 0.05
                    self._poll = POLL_WHILE_DOWN[0]
                    self._wake()  # re-read: appends may have landed while nobody listened
                    _settle(self._ready)
                    await self._relay(conn)
                except (psycopg.Error, OSError):
                    pass  # dropped, refused or restarted: poll meanwhile, reconnect below
                finally:
                    was_listening, self._listening = self._listening, False
                    with self._lock:
                        self._payloads = None  # notices may be lost while down: list the store again
                    if was_listening:
                        self._wake()  # start polling at once
                    if conn is not None:
                        with contextlib.suppress(Exception):
                            await conn.close()
                _settle(self._ready)
                await asyncio.sleep(pause)
                pause = min(pause * 2, RECONNECT_MAX)
        finally:
            _settle(self._ready)
            _settle(self._finished)

    async def _relay(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """Wake the watcher per notification until the connection fails.

        Driven by the socket becoming readable (`add_reader`), not by `conn.notifies()`, which wakes
        every 100 ms to look: an idle watcher then costs nothing at all between appends.
        """
        loop = asyncio.get_running_loop()
        pgconn = conn.pgconn
        readable = asyncio.Event()
        fd = pgconn.socket
        loop.add_reader(fd, readable.set)
        try:
            while True:
                pgconn.consume_input()  # raises OperationalError once the server is gone
                woke = False
                while (notice := pgconn.notifies()) is not None:
                    woke = True
                    with self._lock:
                        if self._payloads is not None:
                            self._payloads.add(notice.extra.decode("utf-8", "replace"))
                if woke:
                    self._wake()
                if pgconn.status != psycopg.pq.ConnStatus.OK:
                    raise psycopg.OperationalError("the listener's connection is no longer open")
                await readable.wait()
                readable.clear()
        finally:
            loop.remove_reader(fd)

    async def wait(self) -> None:
        if self._listening:
            await self._event.wait()
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._event.wait(), self._poll)
            self._poll = min(self._poll * 1.5, POLL_WHILE_DOWN[1])
        self._event.clear()

    async def close(self) -> None:
        self._loop = None
        with self._lock:
            self._closing = True
            listener, self._listener = self._listener, None
        if listener is None:
            return  # never started (and now never will): nothing is held
        loop, task = listener
        if task is None:
            return
        with contextlib.suppress(RuntimeError):  # the store's loop already stopped, which ended it
            loop.call_soon_threadsafe(task.cancel)
        # Wait until the listener's connection is closed (on the store's loop), not merely until the
        # cancel was asked for.
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.wrap_future(self._finished), 30)
