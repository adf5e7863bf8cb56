"""Random access into a log: the checkpointed fold of one line, and every view of it.

Job: fold a log once (through `fold`, or the verifying fold when it verifies: the same rules) and keep, every K entries, a checkpoint of what
every view needs: the exact persisted snapshot (compact JSON bytes) and, when the caller passes a
ledger factory, a copy of the runtime's effect ledger; with `verify=True` the same pass checks every
recorded stateHash. The state after any entry then costs one restore plus at most K transitions, and a
step to the next entry one transition, whose microstep trace comes from that same engine call. An LRU
keeps recent points for scrubbing. Must never refold from 0 once a checkpoint exists, never execute an
action, and never mutate an entry.

The checkpoint fold runs eagerly at construction (the default) or progressively (`lazy=True`): it then
advances only as far as the furthest index asked for, or as `build(until)` drives it (e.g. from a
background thread; the Timeline is thread-safe). A growing log (a branch, a followed thread) is
extended with `append` / `extend`, and forks share the checkpoints below their cut.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import partial
from itertools import islice
from typing import Any

import orjson

from ..canonical.jcs import state_hash
from ..errors import AgentError, AgentLogFormatError
from .configurations import ConfigurationTrack, TrackedConfigurations
from .entries import recorded_state_hash
from .fold import FoldErrors, Ledger, LedgerFactory, Step, check_entry_machine, fold, late_init, seed
from .replay import check_verify_mode
from .verification import Divergence, VerificationReport, Verifier
from .verifying_fold import verifying_fold

__all__ = ["Point", "Timeline", "default_checkpoint_interval"]

MIN_INTERVAL = 16
MAX_INTERVAL = 256
LEDGER_INTERVAL = 64
"""The effect ledger is checkpointed more densely than the snapshot (every min(K, 64) entries): stepping it costs
about half a transition and needs no engine call (it steps over the points the snapshot fold cached), so a jump
pays at most K transitions plus at most 64 ledger steps."""
BUILD_CHUNK = 1024  # entries folded per lock hold: a reader waits at most ~10 ms for a builder
"""K is capped so a jump costs at most 256 transitions: with the engine folding ~15-30k events/s
that bounds a cold jump near 10-20 ms (the explorer's budget is 50 ms at p95), while a
1,000,000-entry log still needs only ~4,000 checkpoints (~1.5 KB of JSON bytes each)."""


def _span(entries: list[Mapping[str, Any]], start: int, stop: int) -> Iterator[Mapping[str, Any]]:
    """`entries[start:stop]` without copying it, in O(stop - start) (`islice` would walk from 0 to `start`)."""
    return (entries[i] for i in range(start, min(stop, len(entries))))


def default_checkpoint_interval(length: int) -> int:
    """~sqrt(n), clamped to [16, 256]: few checkpoints for short logs, bounded jumps for long ones."""
    return max(MIN_INTERVAL, min(MAX_INTERVAL, math.isqrt(max(length, 1))))


class Point:
    """What one index of a line is: the snapshot after the entry, the actions its transition returned, the
    microsteps it caused (`trace`; None until asked for), the effect ledger after it (None until asked for, or
    without a ledger factory; owned by this point: read it, never step it), and the error the fold recorded
    there (with `errors="record"`)."""

    __slots__ = ("actions", "error", "index", "ledger", "snapshot", "trace")

    def __init__(
        self, index: int, snapshot: Any, actions: list[Any] | None, trace: list[dict[str, Any]] | None = None,
        ledger: Ledger | None = None, error: Exception | None = None,
    ) -> None:
        self.index = index
        self.snapshot = snapshot
        self.actions = actions
        self.trace = trace
        self.ledger = ledger
        self.error = error

    @classmethod
    def of(cls, step: Step, ledger: Ledger | None = None) -> Point:
        return cls(step.index, step.snapshot, step.actions, step.trace, ledger, step.error)

    def step(self, entry: Mapping[str, Any]) -> Step:
        """This point as the Step that made it (for stepping a ledger over cached points, no engine call)."""
        return Step(self.index, entry, self.snapshot, self.actions, True, self.trace, self.error)

    def __repr__(self) -> str:
        return f"Point({self.index}, value={getattr(self.snapshot, 'value', None)!r}, traced={self.trace is not None})"


class Timeline:
    """A log plus a machine, answering `state_at(i)` (the snapshot after entry i) at random.

    `len(t)` entries; `t.state_at(i)` equals `replay(machine, entries[:i + 1]).snapshot`;
    `t.persisted_at(i)`, `t.hash_at(i)`, `t.verify_at(i)`, `t.trace_at(i)` (the microsteps entry i
    caused, for highlighting the transition taken), `t.point_at(i)` (all of it at once, plus the
    ledger), `t.append(entry)` to grow a branch. Negative indices count from the end.

    `ledger=` (a `LedgerFactory`, e.g. the runtime's `EffectLedger.start_from`) folds what is owed along
    (`t.effects_at(i)`); `verify=True` (or `"strict"`) checks every recorded stateHash in the same pass
    (`t.verification`); `errors="record"` keeps folding past an entry that cannot be folded (the state
    stays the one before it; `t.point_at(i).error` says why), as a postmortem must.

    The entries are copied into the Timeline's own list at construction (it grows only through
    `append` / `extend`); every entry's machine version is checked then (`check_version=False` opens a log under
    a machine that did not record it, e.g. to see where today's code parts from it).
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
        ledger: LedgerFactory | None = None,
        verify: bool | str = False,
        errors: FoldErrors = "raise",
    ) -> None:
        listed: list[Mapping[str, Any]] = list(entries)
        if checkpoint_every is not None and (not isinstance(checkpoint_every, int) or checkpoint_every < 1):
            raise AgentError(
                f"checkpoint_every must be a positive int, not {checkpoint_every!r}.", code="invalid-argument"
            )
        check_verify_mode(verify)
        if errors not in ("raise", "record"):  # a lazy Timeline would only find out at its first fold
            raise AgentError(f"errors must be 'raise' or 'record', not {errors!r}.", code="invalid-argument")
        every = checkpoint_every or default_checkpoint_interval(len(listed))
        cache_size = cache_size if cache_size is not None else max(4 * every, 1024)
        first = seed(machine, listed[0] if listed else None, check_version=check_version, trace=True)
        self._setup(machine, listed, check_version, every, cache_size, ledger, errors)
        self._check_entries(islice(listed, 1, None), 1)
        self._verifier = Verifier(machine, strict=verify == "strict") if verify else None
        work = ledger(machine, first) if ledger is not None else None
        if self._verifier is not None:
            self._verifier.check(first)
            self._verifier.mark()
        self._start([self._snapshot_bytes(first.snapshot)], [work.copy()] if work is not None else [], first.snapshot,
                    work)
        self._remember(Point.of(first, work.copy() if work is not None else None))
        self._configurations.add(first.snapshot)
        if not lazy:
            self.build()

    # -- construction helpers -----------------------------------------------------------------

    def _setup(
        self, machine: Any, entries: list[Mapping[str, Any]], check_version: bool, every: int, cache_size: int,
        ledger: LedgerFactory | None, errors: FoldErrors,
    ) -> None:
        """The state every Timeline starts with (a fresh one and a `fork`), checkpoints aside."""
        self._machine = machine
        self._entries = entries
        self._check_version = check_version
        self._every = every
        self._cache_size = cache_size
        self._ledger_factory = ledger
        self._ledger_every = min(every, LEDGER_INTERVAL)
        self._errors = errors
        self._lock = threading.RLock()
        self._cache: OrderedDict[int, Point] = OrderedDict()
        self._hashes: OrderedDict[int, str] = OrderedDict()
        self._last: int = -1
        self._configurations = ConfigurationTrack()  # fed by the checkpoint fold, one number per index
        self._built_listeners: list[Callable[[int], None]] = []
        # Checkpoints keep the engine's exact form ("_nodes"): XState's plain restore can order active
        # states differently from the live fold (e.g. a deep history in a parallel state), and a
        # checkpoint must continue exactly as the fold from 0 would. Never hashed.
        self._exact = partial(machine.get_persisted_snapshot, exact=True)

    def _snapshot_bytes(self, snapshot: Any) -> bytes:
        return orjson.dumps(self._exact(snapshot))

    def _start(self, checkpoints: list[bytes], ledgers: list[Ledger], snapshot: Any, ledger: Ledger | None) -> None:
        """Take over `checkpoints` (snapshot after entry j*K) and `ledgers` (ledger after entry j*L); the fold's
        frontier is 0 unless the caller (a fork) sets it."""
        self._checkpoints = checkpoints
        self._ledgers = ledgers
        self._frontier = 0  # every checkpoint up to here exists; the fold's working state is its state
        self._frontier_snapshot = snapshot
        self._frontier_ledger = ledger  # the build's own working ledger: stepped in place, never cached

    def _check_entries(self, entries: Iterable[Mapping[str, Any]], start: int) -> None:
        """Refuse entries (the first at position `start`) that cannot be folded by this Timeline; with
        `errors="record"` only a version mismatch is refused (the fold records the rest)."""
        machine = self._machine
        machine_id, machine_version = machine.id, machine.version
        strict = self._errors == "raise"
        check_version = self._check_version
        for index, entry in enumerate(entries, start):
            # Plain dicts first: an ABC isinstance check costs ~0.2 µs, and this runs once per entry on open.
            event = entry.get("event") if type(entry) is dict or isinstance(entry, Mapping) else None
            event_type = event.get("type") if type(event) is dict or isinstance(event, Mapping) else None
            if type(event_type) is not str:
                if strict:
                    raise AgentLogFormatError(
                        f"Entry {index} is not an entry object with an event that has a string type.", index=index
                    )
                continue
            if check_version and (entry.get("machineVersion") != machine_version or entry.get("machineId") != machine_id):
                check_entry_machine(machine, entry, index)
            if strict and event_type == "@agent.init":
                raise late_init(entry, index)

    def build(self, until: int | None = None, *, progress: Callable[[int, int], None] | None = None) -> int:
        """Advance the checkpoint fold to index `until` (default: the end); returns the frontier.

        The fold runs in chunks of `BUILD_CHUNK` entries and releases the lock between them, so a
        background thread can build a long log while another thread keeps answering `state_at`
        for indices already covered. `progress(built, total)` is called after each chunk.
        """
        with self._lock:
            total = len(self._entries)
            target = total - 1 if until is None else min(self._normalize(until), total - 1)
        folded = False
        while True:
            with self._lock:
                if target <= self._frontier:
                    frontier = self._frontier
                    done = folded and frontier == len(self._entries) - 1
                    break
                folded = True
                stop = min(target, self._frontier + BUILD_CHUNK)
                self._fold_frontier(stop)
                built = self._frontier + 1
            if progress is not None:
                progress(built, total)
        if done:
            self._tell_built(frontier + 1)
        return frontier

    def on_built(self, listener: Callable[[int], None]) -> None:
        """Call `listener(built)` each time the checkpoint fold reaches the end of the entries (a build, an append
        or an extend that folded the last entry), from the thread that folded it, after its last chunk: a view
        that shows what the whole fold found (the configuration track) publishes it then, without polling. A
        listener must not wait for another thread that may need this Timeline (an extend calls it under the lock)."""
        with self._lock:
            self._built_listeners.append(listener)

    def _tell_built(self, built: int) -> None:
        for listener in list(self._built_listeners):
            listener(built)

    def configurations(self) -> TrackedConfigurations | None:
        """The configuration of every index the checkpoint fold has covered ([0, built)), recorded as it folded
        (eventlog/configurations.py); None when the line visits more configurations than a track holds."""
        with self._lock:
            return self._configurations.read()

    def _fold_frontier(self, stop: int) -> None:
        step: Step | None = None
        span = _span(self._entries, self._frontier + 1, stop + 1)
        start = (self._frontier, self._frontier_snapshot)
        if self._verifier is not None:  # the one verifying fold (verifying_fold.py); it hands each Step on
            last: list[Step] = []

            def keep(taken: Step) -> None:
                self._keep(taken, mark=False)  # the fold marks the verifier's counts once it has checked them
                last[:] = (taken,)

            verifying_fold(self._verifier, span, start=start, check_version=False, errors=self._errors, take=keep,
                           mark_every=self._every)
            step = last[0] if last else None
        else:
            for step in fold(self._machine, span, start=start, check_version=False, errors=self._errors):
                self._keep(step)
        if step is not None:
            self._frontier, self._frontier_snapshot = stop, step.snapshot
            if stop not in self._cache:
                ledger = self._frontier_ledger
                self._remember(Point.of(step, ledger.copy() if ledger is not None else None))

    def _take(self, step: Step) -> None:
        """One step of the checkpoint fold taken from outside the fold (a branch's append): the verifier
        checks it, then it is kept."""
        if self._verifier is not None:
            self._verifier.check(step)
        self._keep(step)

    def _keep(self, step: Step, mark: bool = True) -> None:
        """One step of the checkpoint fold: the ledger takes it; checkpoints are kept (and, with `mark`, the
        verifier's counts at them: the step is checked already)."""
        ledger = self._frontier_ledger
        if ledger is not None:
            ledger.step(step)
            if step.index % self._ledger_every == 0:
                self._ledgers.append(ledger.copy())
        verifier = self._verifier
        self._configurations.add(step.snapshot)
        if step.index % self._every == 0:
            self._checkpoints.append(self._snapshot_bytes(step.snapshot))
            if verifier is not None and mark:
                verifier.mark()  # a fork's counts start here

    def _adopt(self, step: Step) -> None:
        """Advance the fold by one step the caller already took from the frontier (a branch's append
        folds its event once to hash it; the Timeline takes that very step instead of a second)."""
        self._take(step)
        self._frontier, self._frontier_snapshot = step.index, step.snapshot
        ledger = self._frontier_ledger
        self._remember(Point.of(step, ledger.copy() if ledger is not None else None))

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

    @property
    def verifies(self) -> bool:
        return self._verifier is not None

    @property
    def verification(self) -> VerificationReport:
        """What the checkpoint fold has verified so far (all of it once `built == len(t)`)."""
        if self._verifier is None:
            raise AgentError("this Timeline was opened with verify=False", code="invalid-argument")
        with self._lock:
            return self._verifier.report(self._frontier_snapshot)

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

    def _remember(self, point: Point) -> None:
        cache = self._cache
        cache[point.index] = point
        cache.move_to_end(point.index)
        if len(cache) > self._cache_size:
            cache.popitem(last=False)

    def point_at(self, index: int, *, traced: bool = True, ledger: bool = True) -> Point:
        """Everything the line is after entry `index` (with its trace unless `traced=False`, and its ledger
        when the Timeline folds one, unless `ledger=False`): one transition from the point before it when
        scrubbing, else one restore plus at most K transitions and at most L ledger steps."""
        with self._lock:
            index = self._normalize(index)
            point = self._snapshot_point(index, traced)
            if traced and point.trace is None:
                point = self._retrace(point)
            if ledger and self._ledger_factory is not None and point.ledger is None:
                point.ledger = self._ledger_at(point)
            self._last = index
            return point

    def _snapshot_point(self, index: int, traced: bool) -> Point:
        """The cached point of `index`, folding to it when it is not cached (its snapshot and actions only)."""
        cache = self._cache
        found = cache.get(index)
        if found is not None:
            cache.move_to_end(index)
            return found
        if index > self._frontier:
            self.build(index)
            return cache[index]
        base = index - index % self._every
        last = self._last
        previous = cache.get(index - 1)
        if previous is not None:
            start = previous  # scrubbing forward: one step
        elif base <= last < index and last in cache:
            start = cache[last]
        else:
            start = Point(base, self._machine.restore_snapshot(orjson.loads(self._checkpoints[base // self._every])),
                          None)
            if base == index:
                self._remember(start)
                return start
        return self._fold_points(start, index, traced)

    def _fold_points(self, start: Point, stop: int, traced: bool) -> Point:
        """Fold from `start` to `stop`, caching every point on the way (snapshot and actions); only the last
        step is traced (a trace is read for the index on view; the one before it is one transition away)."""
        point = start
        span = stop - start.index
        if span > 1 or not traced:
            for step in fold(
                self._machine, _span(self._entries, start.index + 1, stop if traced else stop + 1),
                start=(start.index, start.snapshot), check_version=False, errors=self._errors,
            ):
                point = Point.of(step)
                self._remember(point)
        if traced:
            for step in fold(
                self._machine, _span(self._entries, stop, stop + 1), start=(point.index, point.snapshot),
                check_version=False, trace=True, errors=self._errors,
            ):
                point = Point.of(step)
                self._remember(point)
        return point

    def _retrace(self, point: Point) -> Point:
        """The trace of a point known without one: the same transition again, from the point before it."""
        index = point.index
        if index == 0:
            first = seed(self._machine, self._entries[0], check_version=False, trace=True)
            point.trace = list(first.trace or [])
            return point
        before = self._snapshot_point(index - 1, False)
        for step in fold(
            self._machine, _span(self._entries, index, index + 1), start=(before.index, before.snapshot),
            check_version=False, trace=True, errors=self._errors,
        ):
            point.trace = list(step.trace or [])
        return point

    def _ledger_at(self, point: Point) -> Ledger:
        """The ledger after `point`: from the nearest ledger before it (a cached point's, or the checkpoint every
        L entries), stepped over the cached points in between. Steps the ledger only: no engine call, unless a
        point in between was evicted from the cache (then the snapshot fold refills it)."""
        index = point.index
        floor = index - index % self._ledger_every
        start = index - 1
        while start > floor:
            cached = self._cache.get(start)
            if cached is not None and cached.ledger is not None:
                break
            start -= 1
        if start > floor:
            ledger = self._cache[start].ledger
        else:
            start = floor
            ledger = self._ledgers[floor // self._ledger_every]
        assert ledger is not None
        entries = self._entries
        for position in range(start + 1, index + 1):
            at = point if position == index else self._snapshot_point(position, False)
            ledger = ledger.copy()
            ledger.step(at.step(entries[position]))
            at.ledger = ledger
        return ledger.copy() if start == index else ledger

    def state_at(self, index: int) -> Any:
        """The engine snapshot after entry `index`: one restore plus at most K transitions."""
        return self.point_at(index, traced=False, ledger=False).snapshot  # a snapshot needs no effect ledger

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
        and an event the state ignores have no microsteps that take a transition.
        """
        return list(self.point_at(index, ledger=False).trace or [])

    def effects_at(self, index: int) -> list[Any]:
        """What is owed after entry `index`, from the ledger folded along (see `ledger=`)."""
        if self._ledger_factory is None:
            raise AgentError(
                "effects_at needs a Timeline opened with ledger= (the runtime's EffectLedger.start_from): the log "
                "layer alone cannot say what is owed.",
                code="no-effect-ledger",
            )
        ledger = self.point_at(index, traced=False).ledger
        assert ledger is not None
        return ledger.owed()

    # -- branches and growing logs ------------------------------------------------------------

    def append(self, entry: Mapping[str, Any], *, folded: Step | None = None) -> Any:
        """Add one entry at the end (a branch growing); returns the snapshot after it.

        The entry must carry `index == len(t)` (when it has an `index`) and, unless the Timeline
        was opened with `check_version=False`, this machine's id and version. `folded`: the Step of
        this very entry from the state after the last one (`fold(..., start=...)`, e.g. traced), when
        the caller has already folded it: taken as is, so the entry is not folded twice.
        """
        with self._lock:
            position = len(self._entries)
            if folded is None or folded.index != position or self._frontier != position - 1:
                self.extend((entry,))
                return self.state_at(position)
            self._check_entries((entry,), position)
            recorded = entry.get("index", position)
            if recorded != position:
                raise AgentLogFormatError(
                    f"Appended entry carries index {recorded}, but the log has {position} entries: "
                    f"the next entry must carry index {position}.",
                    index=position,
                )
            self._entries.append(entry)
            self._adopt(Step(position, entry, folded.snapshot, folded.actions, folded.changed, folded.trace,
                             folded.error))
        self._tell_built(position + 1)
        return folded.snapshot

    def extend(self, entries: Iterable[Mapping[str, Any]]) -> int:
        """Add entries at the end (a followed thread's new batch); folds them as far as the fold had got
        (to the old end: the new ones too, so a verifying Timeline has checked them on return). Returns
        the new length."""
        with self._lock:
            added = list(entries)
            position = len(self._entries)
            self._check_entries(added, position)
            for offset, entry in enumerate(added):
                recorded = entry.get("index", position + offset)
                if recorded != position + offset:
                    raise AgentLogFormatError(
                        f"Appended entry carries index {recorded}, but the log has {position + offset} entries: "
                        f"the next entry must carry index {position + offset}.",
                        index=position + offset,
                    )
            caught_up = self._frontier == position - 1
            self._entries.extend(added)
            if caught_up and added:
                self.build()
            return len(self._entries)

    def fork(self, up_to_index: int) -> Timeline:
        """A Timeline of the prefix `[0, up_to_index)` that shares this one's checkpoints.

        Same cut as `fork_event_log` (the init entry stays); the branch then grows with
        `append`. No entry is refolded: the checkpoints below the cut, the point at the cut and the
        verification so far are taken over.
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
            at = self.point_at(frontier, traced=False)
            branch = object.__new__(Timeline)
            branch._setup(
                self._machine, list(self._entries[:up_to_index]), self._check_version, self._every,
                self._cache_size, self._ledger_factory, self._errors,
            )
            work = at.ledger.copy() if at.ledger is not None else None
            branch._start(self._checkpoints[: frontier // self._every + 1],
                          self._ledgers[: frontier // self._ledger_every + 1], at.snapshot, work)
            branch._frontier = frontier
            branch._configurations = self._configurations.copy_until(frontier + 1)
            branch._verifier = (
                self._verifier.copy_until(self._entries, frontier + 1) if self._verifier is not None else None
            )
            for index in range(max(0, frontier - 1), frontier + 1):  # the cut (and the step into it) stay warm
                shared = self._cache.get(index)
                if shared is not None:
                    branch._remember(shared)
            if frontier not in branch._cache:
                branch._remember(at)
            return branch
