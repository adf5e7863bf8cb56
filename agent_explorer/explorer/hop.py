"""Where a widget's state leaves for the browser: from one of the kernel's threads, never from a worker.

A widget's traitlets are written from the kernel's threads (cells, browser messages) and from worker threads (a
followed run, a background fold, a search, the run list's folds). The Python value is set at once, under the
widget's one lock, so a cell reads the truth in whatever thread asks, even in a cell that blocks; the comm
message that carries it to the browser is sent from the kernel: inline on a kernel thread (the one that built
the widget, or the subshell thread ipykernel 7 may answer the widget's messages on), and for a worker on the next
turn of the loop of the kernel thread that last answered the widget. Messages queued for a loop are merged: one
update carries the newest value of every traitlet written meanwhile. Outside a running loop (plain Python, tests)
the message is sent inline. Never blocks a writer on the loop. The widgets (widget.py's `HoppingWidget`) route
ipywidgets' `send_state` here.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable, Iterable

__all__ = ["KernelHop"]

Send = Callable[[list[str]], None]


class KernelHop:
    """One widget's lock, the kernel threads it may send from, and the queue of traitlets to send from a loop."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        # The kernel's threads that handle this widget (the one that built it; ipykernel 7 may hand a widget's
        # messages to a subshell's thread), each with its running loop. Threads, not idents: an ident is reused.
        self._homes: weakref.WeakKeyDictionary[threading.Thread, asyncio.AbstractEventLoop] = (
            weakref.WeakKeyDictionary())
        self.loop: asyncio.AbstractEventLoop | None = None  # where other threads' messages are sent from
        self.adopt()
        self._queued: dict[str, None] = {}  # an ordered set: the traitlets written off the kernel's threads
        self._scheduled = False

    def adopt(self) -> None:
        """The kernel runs this widget's code on the current thread (its construction, a message from the front end):
        messages may be sent from here, and those written elsewhere go to this thread's loop from now on (a subshell
        that answers the widget while the main shell runs a long cell keeps the view current)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # plain Python: no loop to hop to
        with self.lock:
            self._homes[threading.current_thread()] = loop
            self.loop = loop

    @property
    def at_home(self) -> bool:
        """True on one of the kernel's threads (or with no loop to hop to): a message may be sent from here."""
        return self.loop is None or threading.current_thread() in self._homes

    def send(self, keys: Iterable[str], send: Send) -> None:
        """Send `keys`' current values now when at home, else on the loop's next turn (merged with the others)."""
        names = list(keys)
        if self.at_home:
            with self.lock:
                for name in names:
                    self._queued.pop(name, None)  # its newest value goes now
                send(names)
            return
        with self.lock:
            self._queued.update(dict.fromkeys(names))
            if self._scheduled:
                return
            self._scheduled = True
            loop = self.loop
        try:
            assert loop is not None
            loop.call_soon_threadsafe(self._flush, send)
        except RuntimeError:  # the loop is closed (its kernel, or an asyncio.run, ended): nobody is left to hop to
            self._flush(send)

    def _flush(self, send: Send) -> None:
        with self.lock:
            names, self._queued, self._scheduled = list(self._queued), {}, False
            if names:
                send(names)

    def soon(self, callback: Callable[[], None]) -> bool:
        """Run `callback` on this thread's loop's next turn when called on one of the kernel's threads while its loop
        runs (a burst of browser messages then answers only the newest); False when there is no such turn."""
        loop = self._homes.get(threading.current_thread())
        if loop is None or not loop.is_running():
            return False
        loop.call_soon(callback)
        return True
