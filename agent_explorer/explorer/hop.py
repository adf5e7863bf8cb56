"""Where a widget's state leaves for the browser: on the kernel's thread, never from a worker.

A widget's traitlets are written from the kernel's thread (cells, browser messages) and from worker threads (a
followed run, a background fold, a search, the run list's folds). The Python value is set at once, under the
widget's one lock, so a cell reads the truth in whatever thread asks, even in a cell that blocks; the comm
message that carries it to the browser is sent on the event loop that ran the widget's construction (the
kernel's), where ipykernel expects its sockets to be used. Messages queued for the loop are merged: one update
carries the newest value of every traitlet written meanwhile. Outside a running loop (plain Python, tests) the
message is sent inline. Never blocks a writer on the loop. The widgets (widget.py's `HoppingWidget`) route
ipywidgets' `send_state` here.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable

__all__ = ["KernelHop"]

Send = Callable[[list[str]], None]


class KernelHop:
    """One widget's lock, and the queue of traitlets to send from the kernel's loop."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        try:
            self.loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None  # plain Python: every message goes inline
        self._home = threading.get_ident()
        self._queued: dict[str, None] = {}  # an ordered set: the traitlets written off the kernel's thread
        self._scheduled = False

    @property
    def at_home(self) -> bool:
        """True on the kernel's thread (or with no loop to hop to): a message may be sent from here."""
        return self.loop is None or threading.get_ident() == self._home

    def send(self, keys: Iterable[str], send: Send) -> None:
        """Send `keys`' current values now when at home, else on the loop's next turn (merged with the others)."""
        names = list(keys)
        if self.at_home:
            with self.lock:
                for name in names:
                    self._queued.pop(name, None)  # its newest value goes now
                send(names)
            return
        assert self.loop is not None
        with self.lock:
            self._queued.update(dict.fromkeys(names))
            if self._scheduled:
                return
            self._scheduled = True
        try:
            self.loop.call_soon_threadsafe(self._flush, send)
        except RuntimeError:  # the loop is closed (its kernel, or an asyncio.run, ended): nobody is left to hop to
            self._flush(send)

    def _flush(self, send: Send) -> None:
        with self.lock:
            names, self._queued, self._scheduled = list(self._queued), {}, False
            if names:
                send(names)

    def soon(self, callback: Callable[[], None]) -> bool:
        """Run `callback` on the loop's next turn when called on the kernel's thread while its loop runs (a burst
        of browser messages then answers only the newest); False when there is no such turn to wait for."""
        if self.loop is None or threading.get_ident() != self._home or not self.loop.is_running():
            return False
        self.loop.call_soon(callback)
        return True
