"""The events of an explorer's session (session.py): what happened, as small frozen values panels subscribe to.

Each names a fact, not a recipient; the session delivers them run-to-completion, and a subscriber reads what it
needs from the session, never from another panel.
"""

from __future__ import annotations

from dataclasses import dataclass

from .branches import Branch
from .protocol import LiveView, MachinesComparison

__all__ = [
    "CursorMoved", "DivergenceFound", "FoldEnded", "FoldProgressed", "IndexesReady", "LineChanged", "LineGrew",
    "LiveChanged", "Opened",
]


@dataclass(frozen=True)
class Opened:
    """Every panel is built: publish what you show of the recording (its fold runs in the background if lazy)."""

    lazy: bool


@dataclass(frozen=True)
class LineChanged:
    """Another line is on view (a checkout): `session.line`, `.usage` and `.table` are already its own."""

    line: Branch


@dataclass(frozen=True)
class LineGrew:
    """The line on view has more entries (a followed recording, an append to the branch on view); views keep what
    they hold of it (page, hits, comparison). The cursor's move, if any, follows as a `CursorMoved`."""

    line: Branch


@dataclass(frozen=True)
class CursorMoved:
    """The frame at `index` is wanted: the cursor moved there, or what is drawn there changed."""

    index: int


@dataclass(frozen=True)
class DivergenceFound:
    """The divergent indices of the line on view, as its verification knows them now (none, when it is clean)."""

    divergent: frozenset[int]


@dataclass(frozen=True)
class IndexesReady:
    """A long recording's one-pass indexes (usage sums, type counts) are built: `session.usage` is set."""


@dataclass(frozen=True)
class FoldProgressed:
    """The recording's background fold reached `built` of `total` entries."""

    built: int
    total: int


@dataclass(frozen=True)
class FoldEnded:
    """The recording's background fold is over (`error`: why it broke off); `machines`: where the recording's
    machine parts from the explorer's (folded after the fold, off the lock, when there is a `compare_with`)."""

    error: str | None
    machines: MachinesComparison | None = None


@dataclass(frozen=True)
class LiveChanged:
    """What the follower says of a live run: following or not, its last append, entries past the cursor."""

    state: LiveView
