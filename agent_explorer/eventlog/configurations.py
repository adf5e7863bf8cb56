"""The configuration track of a fold: per index, which of the line's few distinct configurations it is in.

Why: a front end that knows the active states of every index can light them the moment the cursor moves, with
no round trip to the kernel (issue 23, frames on time). A long run visits few configurations (the inbox sample's
100,001 entries: a handful), so the track is one small number per index plus one snapshot per configuration.
It is recorded by the fold that builds the checkpoints (`Timeline` feeds it every step it takes): never a second
fold. Costs one dict look-up and one array append per step.
"""

from __future__ import annotations

from array import array
from typing import Any, NamedTuple

import orjson

__all__ = ["ConfigurationTrack", "TrackedConfigurations"]

# Past this many distinct configurations the track stops (`overflowed`): the numbers would no longer fit in
# 16 bits, and a run that visits that many configurations gains nothing from a lookup table in the browser.
MAX_CONFIGURATIONS = 65_536


class TrackedConfigurations(NamedTuple):
    """What a track holds, read at once: `snapshots[n]` is the first snapshot seen in configuration n; `codes`
    the configuration number of indices [0, len(codes) // width), unsigned, little-endian, `width` bytes each."""

    snapshots: list[Any]
    codes: bytes
    width: int


class ConfigurationTrack:
    """Numbers each snapshot's configuration in order of first appearance and records the number per index.

    A configuration is told apart by the engine's interned `nodes` tuple (the same object for the same set of
    active states, so an `id` is the key); a snapshot without one (a machine of another engine) by its value's
    JSON. Not thread-safe by itself: the Timeline feeds and reads it under its own lock."""

    __slots__ = ("_codes", "_last_nodes", "_last_number", "_numbers", "_snapshots", "overflowed")

    def __init__(self) -> None:
        self._numbers: dict[Any, int] = {}
        self._snapshots: list[Any] = []  # keeps each key's nodes tuple alive, so its id is never reused
        self._codes = array("B")  # widened to 16 bits at the 257th configuration
        self.overflowed = False
        self._last_nodes: tuple[Any, ...] | None = None  # the last step's configuration, for the common repeat
        self._last_number = 0

    def __len__(self) -> int:
        return len(self._codes)

    def add(self, snapshot: Any) -> None:
        """Record the next index's configuration (the snapshot after it)."""
        nodes = getattr(snapshot, "nodes", None)
        if nodes is self._last_nodes and nodes is not None:  # most steps stay in the configuration they were in
            self._codes.append(self._last_number)
            return
        if self.overflowed:
            return
        key: Any = id(nodes) if type(nodes) is tuple else _value_key(snapshot)
        number = self._numbers.get(key)
        if number is None:
            number = len(self._snapshots)
            if number >= MAX_CONFIGURATIONS:
                self.overflowed = True
                self._codes = array("B")
                self._last_nodes = None
                return
            if number == 256:
                self._codes = array("H", self._codes)
            self._numbers[key] = number
            self._snapshots.append(snapshot)
        self._codes.append(number)
        if type(nodes) is tuple:
            self._last_nodes, self._last_number = nodes, number

    def copy_until(self, stop: int) -> ConfigurationTrack:
        """The track of indices [0, stop), for a fork that shares this line's first `stop` entries."""
        other = ConfigurationTrack()
        other._numbers = dict(self._numbers)
        other._snapshots = list(self._snapshots)
        other._codes = self._codes[:stop]
        other.overflowed = self.overflowed  # the last step's configuration is not carried: the fork looks it up
        return other

    def read(self) -> TrackedConfigurations | None:
        """A copy of the track so far; None once it overflowed."""
        if self.overflowed:
            return None
        codes = self._codes
        if codes.itemsize > 1 and _BIG_ENDIAN:
            codes = array(codes.typecode, codes)
            codes.byteswap()
        return TrackedConfigurations(list(self._snapshots), codes.tobytes(), codes.itemsize)


_BIG_ENDIAN = array("H", [1]).tobytes()[0] == 0


def _value_key(snapshot: Any) -> bytes:
    return orjson.dumps(getattr(snapshot, "value", None), option=orjson.OPT_SORT_KEYS)
