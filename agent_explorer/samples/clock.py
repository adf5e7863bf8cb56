"""The injected clock and id generator every sample run records with, so a regeneration is byte-identical.

`SampleClock` is a manual clock: each reading moves it a small fixed step (the machine "thinking"), and the
scenario scripts move it by hand for the human-sized gaps (an approval twenty minutes later, a timer that fired
four hours later). Never reads the wall clock.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

__all__ = ["EPOCH", "SampleClock", "entry_ids"]

#: Where every sample's clock starts: a fixed instant, so `recordedAt` never depends on when you regenerate.
EPOCH = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)


class SampleClock:
    """A deterministic `now()` for `run_agent(now=...)`: every call returns the current instant and then
    steps it by `step`; `advance(...)` models the time a person or a timer takes between two runs."""

    def __init__(self, start: datetime = EPOCH, step: timedelta = timedelta(milliseconds=850)) -> None:
        self._now = start
        self._step = step

    def __call__(self) -> datetime:
        moment = self._now
        self._now += self._step
        return moment

    def advance(self, **delta: float) -> None:
        """Move the clock forward, e.g. `advance(minutes=20)`; `delta` are `timedelta` keywords."""
        self._now += timedelta(**delta)

    def peek(self) -> datetime:
        return self._now


def entry_ids(thread_id: str, start: int = 0) -> Callable[[], str]:
    """Readable, thread-scoped ids (`support-clean:0007`): unique within a thread, and a fork's new entries
    (which get the fork's own prefix) never collide with the ids it copied from its parent."""
    counter = itertools.count(start)
    return lambda: f"{thread_id}:{next(counter):04d}"
