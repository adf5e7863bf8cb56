"""The state track: the active states of every index of a line, for the browser to light on a slider move.

Why: over a kernel round trip a slider move cannot be highlighted within two frames (benchmarks/scrub.py: the
bare anywidget round trip alone is ~36 ms at p95). The browser holds this track instead, a list of the line's
distinct configurations (a frame's `active` ids each) and one small number per index, and lights the states
the moment the thumb moves; the kernel's frame then fills in the details. Read off the line's one fold (the
Timeline records each index's configuration as it folds: eventlog/configurations.py), never a second fold.
Pure: no widget, no Jupyter.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Mapping
from typing import Any, Literal

from ..eventlog.timeline import Timeline
from .protocol import StateTrack
from .statechart import active_state_ids

__all__ = ["state_track"]


def state_track(line: str, timeline: Timeline, definition: Mapping[str, Any]) -> StateTrack | None:
    """The track of what `timeline` has folded so far (indices [0, built)), for the line named `line`; None when
    the line visits too many configurations to track. Each configuration's ids are computed as a frame's are
    (from the persisted value, explorer/frames.py), once per configuration, not once per index."""
    tracked = timeline.configurations()
    if tracked is None:
        return None
    machine = timeline.machine
    # The engine tells configurations apart by their nodes in XState's `_nodes` order, which can differ for one
    # set of states (entered in another order): those are one configuration to draw, so they are merged here.
    configurations: list[list[str]] = []
    seen: dict[tuple[str, ...], int] = {}
    renumber: list[int] = []
    for snapshot in tracked.snapshots:
        ids = active_state_ids(definition, machine.get_persisted_snapshot(snapshot).get("value"))
        renumber.append(seen.setdefault(tuple(ids), len(configurations)))
        if renumber[-1] == len(configurations):
            configurations.append(ids)
    codes, width = _renumbered(tracked.codes, tracked.width, renumber, len(configurations))
    return {"line": line, "length": len(codes) // width, "configurations": configurations, "width": width,
            "codes": codes}


def _renumbered(codes: bytes, width: int, renumber: list[int], count: int) -> tuple[bytes, Literal[1, 2]]:
    """`codes` (little-endian, `width` bytes each) with each number n replaced by renumber[n], in as few bytes as
    the new numbers need. One byte in and out (the usual case) is one `bytes.translate` over the whole track."""
    if renumber == list(range(len(renumber))):
        return codes, 1 if width == 1 else 2
    if width == 1:
        return codes.translate(bytes(renumber + [0] * (256 - len(renumber)))), 1
    numbers = array("H", codes)
    if sys.byteorder == "big":
        numbers.byteswap()
    out = array("B" if count <= 256 else "H", map(renumber.__getitem__, numbers))
    if out.itemsize == 2 and sys.byteorder == "big":
        out.byteswap()
    return out.tobytes(), 1 if out.itemsize == 1 else 2
