"""Random access into a log: the state after any entry, in one restore plus at most K transitions.

Job: hold a log and a machine; keep persisted-snapshot checkpoints every K entries (compact JSON
bytes) and an LRU of recent engine snapshots so the explorer can jump anywhere and scrub
sequentially at O(1) per step; verify lazily, one entry at a time. Must never refold from 0 once
a checkpoint exists, never execute an action, and never mutate an entry.

Checkpoints are built by one fold: eagerly at construction (the default), or progressively
(`lazy=True`): then the fold advances only as far as the furthest index asked for, or as
`build(until)` drives it (e.g. from a background thread; the Timeline is thread-safe).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from itertools import islice
from typing import Any

import orjson

from ..canonical.jcs import state_hash
from ..engine import transition, transition_with_trace
from ..errors import AgentError, AgentLogFormatError
from .entries import USAGE_EVENT_TYPE, recorded_state_hash
from .replay import (
    check_entry_machine,
    find_effects_provider,
    reject_late_init,
    require_init_entry,
    seed,
    trace_transition,
)
from .verification import Divergence

__all__ = ["Timeline", "default_checkpoint_interval"]

MIN_INTERVAL = 16
MAX_INTERVAL = 256
BUILD_CHUNK = 1024  # entries folded per lock hold: a reader waits at most ~10 ms for a builder
"""K is capped so a jump costs at most 256 transitions: with the engine folding ~15-30k events/s
that bounds a cold jump near 10-20 ms (the explorer's budget is 50 ms at p95), while a
1,000,000-entry log still needs only ~4,000 checkpoints (~1.5 KB of JSON bytes each)."""


def default_checkpoint_interval(length: int) -> int:
    """~sqrt(n), clamped to [16, 256]: few checkpoints for short logs, bounded jumps for long ones."""
    return max(MIN_INTERVAL, min(MAX_INTERVAL, math.isqrt(max(length, 1))))


class Timeline:
    """A log plus a machine, answering `state_at(i)` (the snapshot after entry i) at random.

    `len(t)` entries; `t.state_at(i)` equals `replay(machine, entries[:i + 1]).snapshot`;
    `t.persisted_at(i)`, `t.hash_at(i)`, `t.verify_at(i)` (lazy: nothing is verified until
    asked), `t.trace_at(i)` (the microsteps entry i caused, for highlighting the transition
    taken), `t.append(entry)` to grow a branch. Negative indices count from the end.

    The entries are copied into the Timeline's own list at construction; the version of every
    entry is checked then (`check_version=False` opens a log under a machine that did not record
    it, e.g. to look at where today's code parts from it).
    """

    def __init__(
        self,
        machine: Any,
        entries: Iterable[Mapping[str, Any]],
        checkpoint_every: int | None = None,
        *,
        lazy: bool = False,
        cache_size: int | None = None,
        check_version: bool = True,
    ) -> None:
        listed: list[Mapping[str, Any]] = list(entries)
        require_init_entry(listed[0] if listed else None)
        if checkpoint_every is not None and (not isinstance(checkpoint_every, int) or checkpoint_every < 1):
            raise AgentError(
                f"checkpoint_every must be a positive int, not {checkpoint_every!r}.", code="invalid-argument"
            )
        every = checkpoint_every or default_checkpoint_interval(len(listed))
        cache_size = cache_size if cache_size is not None else max(4 * every, 1024)
        snapshot, _ = seed(machine, listed[0], check_version=check_version)
        self._setup(machine, listed, check_version, every, cache_size)
        self._check_entries(islice(listed, 1, None), 1)
        # Slot j holds the checkpoint of index j*K (JSON bytes of the exact persisted snapshot).
        self._start([orjson.dumps(machine.get_persisted_snapshot(snapshot, exact=True))], 0, snapshot)
        if not lazy:
            self.build()

    # -- construction helpers -----------------------------------------------------------------

    def _setup(
        self, machine: Any, entries: list[Mapping[str, Any]], check_version: bool, every: int, cache_size: int
    ) -> None:
        """The state every Timeline starts with (a fresh one and a `fork`), checkpoints aside."""
        self._machine = machine
        self._entries = entries
        self._check_version = check_version
        self._every = every
        self._cache_size = cache_size
        self._lock = threading.RLock()
        self._cache: OrderedDict[int, Any] = OrderedDict()
        self._hashes: OrderedDict[int, str] = OrderedDict()
        self._last: int = -1

    def _start(self, checkpoints: list[bytes], frontier: int, snapshot: Any) -> None:
        """Take over `checkpoints` up to `frontier`, whose state is `snapshot`."""
        self._checkpoints = checkpoints
        self._frontier = frontier  # every checkpoint up to here exists; _frontier_snapshot is its state
        self._frontier_snapshot = snapshot
        self._remember(frontier, snapshot)

    def _check_entries(self, entries: Iterable[Mapping[str, Any]], start: int) -> None:
        """Refuse entries (the first at position `start`) that cannot be folded by this Timeline."""
        machine = self._machine
        machine_id, machine_version = machine.id, machine.version
        for index, entry in enumerate(entries, start):
            event = entry.get("event") if isinstance(entry, Mapping) else None
            if not isinstance(event, Mapping) or not isinstance(event.get("type"), str):
                raise AgentLogFormatError(
                    f"Entry {index} is not an entry object with an event that has a string type.", index=index
                )
            if self._check_version and (
                entry.get("machineVersion") != machine_version or entry.get("machineId") != machine_id
            ):
                check_entry_machine(machine, entry, index)
            reject_late_init(entry["event"], entry, index)

    def build(self, until: int | None = None, *, progress: Callable[[int, int], None] | None = None) -> int:
        """Advance the checkpoint fold to index `until` (default: the end); returns the frontier.

        The fold runs in chunks of `BUILD_CHUNK` entries and releases the lock between them, so a
        background thread can build a long log while another thread keeps answering `state_at`
        for indices already covered. `progress(built, total)` is called after each chunk.
        """
        with self._lock:
            total = len(self._entries)
            target = total - 1 if until is None else min(self._normalize(until), total - 1)
        while True:
            with self._lock:
                if target <= self._frontier:
                    return self._frontier
                stop = min(target, self._frontier + BUILD_CHUNK)
                self._fold_frontier(stop)
                built = self._frontier + 1
            if progress is not None:
                progress(built, total)

    def _fold_frontier(self, stop: int) -> None:
        machine, entries, every = self._machine, self._entries, self._every
        # Checkpoints keep the engine's exact form ("_nodes"): XState's plain restore can order active
        # states differently from the live fold (e.g. a deep history in a parallel state), and a
        # checkpoint must continue exactly as the fold from 0 would. Never hashed.
        get_persisted = partial(machine.get_persisted_snapshot, exact=True)
        checkpoints = self._checkpoints
        snapshot = self._frontier_snapshot
        for index in range(self._frontier + 1, stop + 1):
            event = entries[index]["event"]
            if event["type"] != USAGE_EVENT_TYPE:
                snapshot, _ = transition(machine, snapshot, event)
            if index % every == 0:
                checkpoints.append(orjson.dumps(get_persisted(snapshot)))
        self._frontier, self._frontier_snapshot = stop, snapshot
        self._remember(stop, snapshot)

    # -- sizes and plain accessors ------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def machine(self) -> Any:
        return self._machine

    @property
    def entries(self) -> list[Mapping[str, Any]]:
        """The Timeline's own list of entries (read it; grow it only through `append`)."""
        return self._entries

    def entry(self, index: int) -> Mapping[str, Any]:
        return self._entries[self._normalize(index)]

    @property
    def checkpoint_every(self) -> int:
        return self._every

    @property
    def checkpoint_count(self) -> int:
        return len(self._checkpoints)

    @property
    def built(self) -> int:
        """How many entries the checkpoint fold has covered (== len(t) once fully built)."""
        return self._frontier + 1

    def _normalize(self, index: int) -> int:
        if isinstance(index, bool) or not isinstance(index, int):
            raise TypeError(f"Timeline index must be an int, not {type(index).__name__}")
        length = len(self._entries)
        if index < 0:
            index += length
        if not 0 <= index < length:
            raise IndexError(f"Timeline index {index} out of range for a log of {length} entries")
        return index

    # -- random access ------------------------------------------------------------------------

    def _remember(self, index: int, snapshot: Any) -> None:
        cache = self._cache
        cache[index] = snapshot
        cache.move_to_end(index)
        if len(cache) > self._cache_size:
            cache.popitem(last=False)

    def state_at(self, index: int) -> Any:
        """The engine snapshot after entry `index`: one restore plus at most K transitions."""
        with self._lock:
            index = self._normalize(index)
            cache = self._cache
            snapshot = cache.get(index)
            if snapshot is not None:
                cache.move_to_end(index)
                self._last = index
                return snapshot
            if index > self._frontier:
                self.build(index)
                self._last = index
                return self._frontier_snapshot
            base = index - index % self._every
            last = self._last
            if index - 1 in cache:
                start, snapshot = index - 1, cache[index - 1]  # scrubbing forward: one step
            elif base <= last < index and last in cache:
                start, snapshot = last, cache[last]
            else:
                start = base
                snapshot = self._machine.restore_snapshot(orjson.loads(self._checkpoints[base // self._every]))
                self._remember(base, snapshot)
            machine, entries = self._machine, self._entries
            for position in range(start + 1, index + 1):
                event = entries[position]["event"]
                if event["type"] != USAGE_EVENT_TYPE:
                    snapshot, _ = transition(machine, snapshot, event)
                self._remember(position, snapshot)
            self._last = index
            return snapshot

    def persisted_at(self, index: int) -> dict[str, Any]:
        """The persisted snapshot (XState JSON) after entry `index`; a fresh dict per call."""
        with self._lock:
            index = self._normalize(index)
            if index % self._every == 0 and index <= self._frontier and index not in self._cache:
                persisted = orjson.loads(self._checkpoints[index // self._every])
                persisted.pop("_nodes", None)  # the exact form's restore hint is not part of the state
                return persisted  # type: ignore[no-any-return]
            return self._machine.get_persisted_snapshot(self.state_at(index))  # type: ignore[no-any-return]

    def hash_at(self, index: int) -> str:
        """`state_hash(persisted_at(index))`, cached for recently asked indices."""
        with self._lock:
            index = self._normalize(index)
            found = self._hashes.get(index)
            if found is None:
                found = state_hash(self.persisted_at(index))
                self._hashes[index] = found
                if len(self._hashes) > self._cache_size:
                    self._hashes.popitem(last=False)
            return found

    def verify_at(self, index: int, *, strict: bool = False) -> Divergence | None:
        """Check entry `index`'s recorded stateHash now; None when it matches or carries none.

        With `strict=True` an entry without a hash is a "missing-verification" divergence.
        """
        index = self._normalize(index)
        entry = self._entries[index]
        expected = recorded_state_hash(entry)
        if expected is None:
            if not strict:
                return None
            return Divergence(
                index, entry.get("id"), entry.get("event"), "missing-verification", None, None, None,
                f"Entry {index} carries no verification.stateHash (strict verification).",
            )
        actual = self.hash_at(index)
        if actual == expected:
            return None
        return Divergence(
            index, entry.get("id"), entry.get("event"), "state", expected, actual, self.persisted_at(index),
            f"Entry {index} recorded stateHash {expected}, the fold derived {actual}.",
        )

    def trace_at(self, index: int) -> list[dict[str, Any]]:
        """The microsteps entry `index` caused: `{event, transitions, exited, entered}` each.

        The init entry's trace enters the initial configuration (no transitions); a usage entry
        and an event the state ignores have no microsteps.
        """
        index = self._normalize(index)
        event = self._entries[index]["event"]
        if index == 0:
            return _initial_trace(self._machine, self.state_at(0), event)
        if event["type"] == USAGE_EVENT_TYPE:
            return []
        return trace_transition(self._machine, self.state_at(index - 1), event)

    def effects_at(self, index: int) -> list[Any]:
        """What is owed after entry `index` (the runtime's `get_agent_effects`; [] without runtime).

        Effects derive from the state and the actions of the transition that made it, so the
        last entry at or before `index` that transitioned is re-folded once (purely) for its
        actions; the history given to the provider is the log up to `index`.
        """
        index = self._normalize(index)
        provider = find_effects_provider()
        if provider is None:
            return []
        entries = self._entries
        cause = index
        while cause > 0 and entries[cause]["event"]["type"] == USAGE_EVENT_TYPE:
            cause -= 1
        if cause == 0:
            _, actions = seed(self._machine, entries[0], check_version=False)
        else:
            _, actions = transition(self._machine, self.state_at(cause - 1), entries[cause]["event"])
        return provider(self._machine, self.state_at(index), actions, entries[: index + 1])

    # -- branches -----------------------------------------------------------------------------

    def append(self, entry: Mapping[str, Any]) -> Any:
        """Add one entry at the end (a branch growing); returns the snapshot after it.

        The entry must carry `index == len(t)` (when it has an `index`) and, unless the Timeline
        was opened with `check_version=False`, this machine's id and version.
        """
        with self._lock:
            position = len(self._entries)
            self._check_entries((entry,), position)
            recorded = entry.get("index", position)
            if recorded != position:
                raise AgentLogFormatError(
                    f"Appended entry carries index {recorded}, but the log has {position} entries: "
                    f"the next entry must carry index {position}.",
                    index=position,
                )
            self._entries.append(entry)
            if self._frontier == position - 1:
                self.build(position)
            return self.state_at(position)


    def fork(self, up_to_index: int) -> Timeline:
        """A Timeline of the prefix `[0, up_to_index)` that shares this one's checkpoints.

        Same cut as `fork_event_log` (the init entry stays); the branch then grows with
        `append`. No entry is refolded: the checkpoints below the cut and the state at the cut
        are taken over.
        """
        with self._lock:
            if isinstance(up_to_index, bool) or not isinstance(up_to_index, int) or not (
                1 <= up_to_index <= len(self._entries)
            ):
                raise AgentError(
                    f"fork needs 1 <= up_to_index <= {len(self._entries)} (the init entry stays), "
                    f"got {up_to_index!r}.",
                    code="invalid-fork-index",
                )
            last = up_to_index - 1
            frontier = min(self._frontier, last)
            branch = object.__new__(Timeline)
            branch._setup(
                self._machine, self._entries[:up_to_index], self._check_version, self._every, self._cache_size
            )
            branch._start(self._checkpoints[: frontier // self._every + 1], frontier, self.state_at(frontier))
            return branch

def _initial_trace(machine: Any, snapshot: Any, event: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The init entry's microsteps: entering the initial configuration (from input), or none (a
    restored snapshot enters nothing: it already is its configuration)."""
    if event.get("snapshot") is not None:
        return []
    _, _, trace = transition_with_trace(machine, None, input=event.get("input"))
    return [dict(step) for step in trace]
