"""The verifying fold: `fold` and `Verifier.check` in one loop, rendering each state at its step and hashing a
batch of states at a time.

Job: the one loop of verification (`verify_log` and the fleet through it, `replay(verify=...)`, a verifying
Timeline's build). An ordinary entry (a dict recorded by this machine whose event is a dict with a string type
other than `@agent.init`) is folded with the engine directly (a `@agent.usage` one: kept, as fold keeps it)
and checked by the same rules, in the same order, as `Verifier.check`; any other entry, and an entry whose
transition raised, goes through `fold` and `Verifier.check` themselves, so every rule is still written once
(fold.py, verification.py). tests/replay/test_verifying_fold.py holds this loop to the plain path (`fold` +
`Verifier.check` + the exact `state_hash`) on random logs: tampered, unhashed, reordered, malformed, long.
Pure: it never executes an action, mutates an entry, or writes what it reads.

How it is fast (benchmarks/README.md, "verification at the speed of the fold", has the figures and what else
was tried):
- Batches. Each state's persisted snapshot and orjson text are made right after its step (bytes: what a
  machine that edits its context in place does later cannot reach them), but the SHA-256s of up to `BATCH`
  states are computed, and compared with the record, together. Interleaved with the engine step by step, the
  hash ran at about half its own speed (the engine's and OpenSSL's code and data evict each other).
- Chunks read wholesale. `_Shape` reads a chunk's events, index fields and recorded hashes with C loops
  (itemgetter, zip, list.count) and checks they are ordinary, numbered on and hashed; such a chunk is folded by
  one loop (`_fast`) and, when every hash certifies, counted in one go (`_check_all`).
  A chunk with a divergence is checked entry by entry (`_check`); one `_Shape` declines (a gap in the index
  fields, an entry without a hash, anything malformed) is left to the loop, one entry at a time.
- One engine Scope for the whole fold (`engine.transition.snapshot_stepper`, `transition_stepper`) and no
  actions built unless asked.

Order is kept: every problem is recorded (or, for replay, raised) at its entry, after every entry before it
has been checked; a batch is checked before an entry that leaves the fast path and before a transition's error
is recorded or raised, so replay still raises the log's first problem. What batching changes: the fold may run
up to `BATCH - 1` entries past the first problem before replay raises it (pure: nothing is executed), and
`take` sees each step when it is folded, before its hash is checked (the verifier's counts at `mark_every`
positions are marked when they are checked).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial
from hashlib import sha256
from itertools import islice
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final

import orjson

from ..canonical.jcs import state_hash
from ..canonical.verify_hash import certifies, check_state_hash, is_jcs_text, strict_text
from ..engine import transition
from ..engine.transition import next_snapshot, snapshot_stepper, transition_stepper
from ..errors import AgentError
from .entries import INIT_EVENT_TYPE, USAGE_EVENT_TYPE
from .fold import FoldErrors, Step, fold, seed

if TYPE_CHECKING:
    from .verification import Verifier

__all__ = ["BATCH", "verifying_fold"]

BATCH: Final = 32
"""Entries read, and states hashed, together. 16 to 64 measured alike on benchmarks/fold.py; 128 and 256 lost
most of the gain again (a batch's texts and snapshots no longer stay in the cache)."""

_ABSENT: Any = object()  # a key the entry lacks never equals the machine's id or version

# One folded ordinary entry waiting for its check: (index, entry, snapshot after, actions, changed, usage
# record, recorded hash, persisted snapshot, proof). The proof is the state's text, rendered right after the
# step (bytes: to hash), its digest (str: found at the step by the exact path, or by another hasher) or None
# (its hash is already known, or there is none to check).
_Folded = tuple[int, Mapping[str, Any], Any, "list[Any] | None", bool, bool, Any, "dict[str, Any] | None", Any]


class _Run:
    """What one verifying fold's helpers share (read once per batch, not per entry)."""

    __slots__ = ("advance", "advance_owing", "certify", "collect", "get_persisted", "mark_every", "progress", "shape",
                 "take", "verifier")

    def __init__(
        self, verifier: Verifier, advance: Callable[[Any, dict[str, Any]], Any],
        advance_owing: Callable[[Any, dict[str, Any]], tuple[Any, list[Any]]], collect: bool, shape: _Shape,
        take: Callable[[Step], None] | None, progress: Callable[[int], None] | None, mark_every: int,
    ) -> None:
        self.verifier, self.advance, self.advance_owing, self.collect = verifier, advance, advance_owing, collect
        self.shape = shape
        self.take, self.progress, self.mark_every = take, progress, mark_every
        self.get_persisted = verifier.machine.get_persisted_snapshot
        self.certify = verifier.hasher is check_state_hash


def verifying_fold(
    verifier: Verifier,
    entries: Iterable[Mapping[str, Any]],
    *,
    start: tuple[int, Any] | None = None,
    check_version: bool = True,
    errors: FoldErrors = "record",
    take: Callable[[Step], None] | None = None,
    progress: Callable[[int], None] | None = None,
    actions: bool = True,
    mark_every: int = 0,
) -> tuple[int, Any, list[Any] | None]:
    """Fold `entries` through `verifier.machine`, checking each as `verifier.check` would; returns
    `(last index, last snapshot, the actions the last transition returned)` (`None`: no transition ran).

    Without `start` the first entry is the init entry (seeded as `fold` seeds it); with `start=(index,
    snapshot)` the entries are the ones after `index` (a Timeline's next chunk). `take(step)`, when given, gets a
    Step for every entry in log order, right after it is folded (a Timeline's ledger and checkpoints read the
    snapshot then); an entry that leaves the fast path (an init, a malformed one, one whose transition raised)
    is checked before it is taken. `mark_every=K` marks the verifier's counts (`Verifier.mark_at`) after each
    position that is a multiple of K, once checked. `progress(index)` is called after each entry after the init
    one, in log order, once it is checked. `actions=False` (when no `take`) folds ordinary entries without
    building their actions: a report needs only the states, and the last actions come back as None.
    """
    if errors not in ("raise", "record"):  # before anything is folded
        raise AgentError(f"errors must be 'raise' or 'record', not {errors!r}.", code="invalid-argument")
    machine = verifier.machine
    iterator = iter(entries)
    collect = actions or take is not None
    last_actions: list[Any] | None = None
    if start is None:
        first = seed(machine, next(iterator, None), check_version=check_version)
        verifier.check(first)
        if mark_every:
            verifier.mark()
        if take is not None:
            take(first)
        index, snapshot, last_actions = 0, first.snapshot, first.actions
    else:
        index, snapshot = start
    record = errors == "record"
    machine_id, machine_version = machine.id, machine.version
    get_persisted, hasher = machine.get_persisted_snapshot, verifier.hasher
    # Snapshots of this machine step without next_snapshot's per-step checks (this loop makes them); a start
    # snapshot of another machine (adopted at its first step) takes next_snapshot.
    own = snapshot._machine is machine
    advance = snapshot_stepper(machine) if own else partial(next_snapshot, machine)
    advance_owing = transition_stepper(machine) if own else partial(transition, machine)
    run = _Run(verifier, advance, advance_owing, collect, _Shape(machine_id, machine_version, check_version), take,
               progress, mark_every)
    certify = run.certify  # check_state_hash, unrolled: the text at the step, its SHA-256 with the batch's
    limit = BATCH if certify else 1  # another hasher hashes at the step: each entry is checked at once
    batch: list[_Folded] = []
    known = False  # whether the hash of `snapshot` will be known when the batch is checked
    while chunk := list(islice(iterator, BATCH)):
        if certify:  # a run of ordinary, numbered, hashed entries: folded and checked wholesale
            handled, snapshot, taken, error = _fast(run, chunk, index, snapshot)
            if taken is not None:
                last_actions = taken
            index += handled
            if error is not None:  # entry `index + 1` raised: recorded (or raised) as the loop below does
                index += 1
                if not record:
                    raise error
                _plain(run, Step(index, chunk[handled], snapshot, None, False, None, error))
                handled += 1
            if handled == len(chunk):
                continue
            chunk = chunk[handled:]
        for entry in chunk:
            index += 1
            event: Any = entry.get("event") if type(entry) is dict else None
            event_type = event.get("type") if type(event) is dict else None
            plain: Step | None = None
            if (
                type(event_type) is not str or event_type == INIT_EVENT_TYPE
                or (check_version and (
                    entry.get("machineVersion", _ABSENT) != machine_version
                    or entry.get("machineId", _ABSENT) != machine_id
                ))
            ):  # not an ordinary entry: fold's rules, as written (it raises what it must), after the entries before it
                if batch:
                    _check(run, batch)
                    batch = []
                plain = next(fold(machine, (entry,), start=(index - 1, snapshot), check_version=check_version,
                                  errors=errors))
            else:
                if not batch:
                    known = verifier._hash is not None
                if event_type == USAGE_EVENT_TYPE:  # journaled spend: no transition (fold.py), counted (Verifier)
                    after, step_actions, changed, usage = snapshot, None, False, True
                else:
                    usage = False
                    try:
                        if collect:
                            after, step_actions = advance_owing(snapshot, event)
                            last_actions = step_actions
                        else:
                            after, step_actions = advance(snapshot, event), None
                    except Exception as error:  # noqa: BLE001 - recorded only when asked; raised as is otherwise
                        if batch:  # the entries before it first: replay raises the log's first problem
                            _check(run, batch)
                            batch = []
                        if not record:
                            raise
                        plain = Step(index, entry, snapshot, None, False, None, error)
                    else:
                        changed = after is not snapshot
                        if changed:
                            known = False
                if plain is None:
                    verification = entry.get("verification")
                    expected = (
                        verification.get("stateHash")
                        if type(verification) is dict or isinstance(verification, Mapping) else None
                    )
                    persisted: dict[str, Any] | None = None
                    proof: Any = None
                    if expected is not None and not known:
                        # Rendered now: a machine that edits its context in place changes this state's objects later.
                        persisted = get_persisted(after)
                        if not certify:
                            proof = hasher(persisted, expected)
                        else:
                            proof = strict_text(persisted)
                            if proof is None:  # refused: the exact path, at once and in order, raises what it is
                                if batch:
                                    _check(run, batch)
                                    batch = []
                                proof = state_hash(persisted)
                        known = True
                    batch.append((index, entry, after, step_actions, changed, usage, expected, persisted, proof))
                    snapshot = after
                    if take is not None:
                        take(Step(index, entry, after, step_actions, changed))
            if plain is not None:  # the verifier's rules, as written
                _plain(run, plain)
                if plain.actions is not None:
                    last_actions = plain.actions
                snapshot = plain.snapshot
            elif len(batch) >= limit:
                _check(run, batch)
                batch = []
        if batch:  # the next chunk starts from the verifier's own counts
            _check(run, batch)
            batch = []
    return index, snapshot, last_actions


def _plain(run: _Run, step: Step) -> None:
    """An entry off the fast path, checked by `Verifier.check` itself, then marked, taken and reported."""
    verifier = run.verifier
    verifier.check(step)
    if run.mark_every and step.index % run.mark_every == 0:
        verifier.mark()
    if run.take is not None:
        run.take(step)
    if run.progress is not None:
        run.progress(step.index)


def _check(run: _Run, batch: list[_Folded]) -> None:
    """Check a batch of folded ordinary entries, in order, as `Verifier.check` would."""
    verifier, progress, every = run.verifier, run.progress, run.mark_every
    strict, sequence = verifier.strict, not verifier.raises
    checked, unverified, usage = verifier.checked, verifier.unverified, verifier.usage
    previous, persisted, current = verifier._previous_index, verifier._persisted, verifier._hash
    done = verifier.entries - 1
    try:
        for index, entry, after, step_actions, changed, is_usage, expected, rendered, proof in batch:
            done = index
            if is_usage:
                usage += 1
            if changed:
                persisted, current = None, None
            # Verifier.check, in its order: the index field, then the hash.
            recorded_index = entry.get("index")
            if type(recorded_index) is not int and not isinstance(recorded_index, int):
                recorded_index = None
            if sequence and recorded_index is not None and previous is not None and recorded_index != previous + 1:
                verifier._sequence(Step(index, entry, after, step_actions, changed), recorded_index, previous + 1)
            previous = recorded_index
            if expected is None:
                unverified += 1
                if strict:
                    verifier.missing(Step(index, entry, after, step_actions, changed))
            else:
                if proof is not None:
                    persisted = rendered
                    if type(proof) is not bytes:
                        current = proof  # found at the step (the exact path, or another hasher)
                    elif certifies(proof, expected):
                        current = expected  # orjson's speed (canonical/verify_hash.py)
                    else:  # a divergence, or text orjson writes unlike JCS
                        current = _settle(proof, rendered)
                checked += 1
                if current != expected:
                    assert current is not None  # a proof was rendered for every state whose hash was not known
                    verifier.diverged(Step(index, entry, after, step_actions, changed), expected, current, persisted)
            if every and index % every == 0:
                verifier.mark_at(index, checked, unverified, usage, previous)
            if progress is not None:
                progress(index)
    finally:  # what Verifier.check would have left, up to the entry checked last (or raised at)
        verifier.checked, verifier.unverified, verifier.usage = checked, unverified, usage
        verifier._previous_index = previous
        verifier._persisted, verifier._hash, verifier.entries = persisted, current, done + 1


def _settle(text: bytes, persisted: Any) -> str:
    """The exact state hash of a step whose text (rendered right after the step) did not certify the record:
    `state_hash` of the state as it was then, strict about what it holds.

    The state still renders as it did: `state_hash` of it now (which raises on what it holds that is not
    JSON, a tuple or a NaN, as the plain path would). The machine has edited it in place since (later steps of
    the batch): `state_hash` of the text read back, the state's hash if it held only JSON (orjson's strict mode
    refused everything else except what it coerces, which can no longer be seen).
    """
    if strict_text(persisted) == text:
        return state_hash(persisted)
    return state_hash(orjson.loads(text))


class _Shape:
    """What makes a chunk of entries a fast one, read wholesale (C loops over the chunk, no Python per entry)."""

    __slots__ = ("check_version", "machine_id", "machine_version")

    def __init__(self, machine_id: Any, machine_version: Any, check_version: bool) -> None:
        self.machine_id, self.machine_version, self.check_version = machine_id, machine_version, check_version

    def read(
        self, chunk: list[Any], previous: Any,
    ) -> tuple[tuple[dict[str, Any], ...], list[str], tuple[int, ...], list[str]] | None:
        """`(events, their types, index fields, recorded hashes)` when every entry of `chunk` is an ordinary one
        (a dict of this machine, its event a dict with a string type, not an init), numbered on from `previous`
        (index fields: ints, consecutive) and hashed (a string stateHash); else None (the loop takes it)."""
        n = len(chunk)
        if list(map(type, chunk)).count(dict) != n:
            return None
        try:
            if self.check_version:
                events, indexes, verifications, ids, versions = zip(*map(_ENTRY_KEYS, chunk), strict=True)
                if ids.count(self.machine_id) != n or versions.count(self.machine_version) != n:
                    return None
            else:
                events, indexes, verifications = zip(*map(_ENTRY_KEYS_UNVERSIONED, chunk), strict=True)
            if list(map(type, events)).count(dict) != n:
                return None
            types = list(map(_TYPE, events))
            expected = list(map(_STATE_HASH, verifications))
        except (KeyError, TypeError):  # a key missing, or a value that is no object: the loop's rules decide
            return None
        if (
            list(map(type, types)).count(str) != n or INIT_EVENT_TYPE in types
            or list(map(type, indexes)).count(int) != n or list(map(type, expected)).count(str) != n
        ):
            return None
        first = indexes[0]
        if (previous is not None and first != previous + 1) or indexes != tuple(range(first, first + n)):
            return None
        return events, types, indexes, expected


_ENTRY_KEYS: Final = itemgetter("event", "index", "verification", "machineId", "machineVersion")
_ENTRY_KEYS_UNVERSIONED: Final = itemgetter("event", "index", "verification")
_TYPE: Final = itemgetter("type")
_STATE_HASH: Final = itemgetter("stateHash")


def _fast(run: _Run, chunk: list[Any], index: int, snapshot: Any) -> tuple[int, Any, list[Any] | None, Exception | None]:
    """Fold and check a chunk `_Shape` finds ordinary (else nothing): each state rendered right after its step,
    then all the hashes at once. Returns `(entries handled, the snapshot after them, the last transition's
    actions or None, the error the next entry's transition raised or None)`; a chunk with a divergence, text
    that is not JCS or a refused state is checked entry by entry (`_check`), in order."""
    verifier = run.verifier
    read = run.shape.read(chunk, verifier._previous_index)
    if read is None:
        return 0, snapshot, None, None
    events, types, indexes, expected = read
    advance, advance_owing, get_persisted, take = run.advance, run.advance_owing, run.get_persisted, run.take
    afters: list[Any] = []
    persisteds: list[Any] = []
    texts: list[bytes | None] = []  # None: the state did not change and its hash is known (or: refused, the last)
    known = verifier._hash is not None
    persisted: Any = verifier._persisted
    taken: list[Any] | None = None
    error: Exception | None = None
    refused = False
    state = snapshot
    try:
        collect, position = run.collect, index
        for event, event_type in zip(events, types, strict=True):
            position += 1
            step_actions: list[Any] | None = None
            if event_type == USAGE_EVENT_TYPE:
                after = state
            elif collect:
                after, step_actions = advance_owing(state, event)
                taken = step_actions
            else:
                after = advance(state, event)
            changed = after is not state
            if not changed and known:
                texts.append(None)
            else:
                persisted = get_persisted(after)
                text = strict_text(persisted)
                texts.append(text)
                known = True
                refused = text is None
            afters.append(after)
            persisteds.append(persisted)
            state = after
            if take is not None:
                take(Step(position, chunk[position - index - 1], after, step_actions, changed))
            if refused:
                break
    except Exception as raised:  # noqa: BLE001 - the caller records or raises it, after the entries before it
        error = raised
    folded = len(afters)
    checked = folded - 1 if refused else folded
    if checked:
        _check_all(run, chunk, index, snapshot, afters, persisteds, texts, types, indexes, expected, checked)
    if refused:  # the exact path, right after the step (it raises what the state holds), then its check
        last = folded - 1
        proof = state_hash(persisteds[last])
        changed = afters[last] is not (afters[last - 1] if last else snapshot)
        _check(run, [(index + folded, chunk[last], afters[last], None, changed, types[last] == USAGE_EVENT_TYPE,
                      expected[last], persisteds[last], proof)])
    return folded, state, taken, error


def _check_all(
    run: _Run, chunk: list[Any], index: int, snapshot: Any, afters: list[Any], persisteds: list[Any],
    texts: list[bytes | None], types: list[str], indexes: tuple[int, ...], expected: list[str], count: int,
) -> None:
    """Check the first `count` entries `_fast` folded: every hash at once when they all certify, else `_check`."""
    verifier = run.verifier
    if count < len(texts):
        texts, expected = texts[:count], expected[:count]
    if None not in texts and list(map(len, expected)).count(64) == len(expected):
        # One hex conversion for the batch (the records are 64 characters each: the strings line up).
        joined = b"".join(texts)  # type: ignore[arg-type]
        same = b"".join([sha256(text).digest() for text in texts]).hex() == "".join(expected)  # type: ignore[arg-type]
    else:
        digests: list[str | None] = []
        digest = verifier._hash
        for text in texts:
            if text is not None:
                digest = sha256(text).hexdigest()
            digests.append(digest)
        joined = b"".join(filter(None, texts))
        same = digests == expected
    # One JCS scan for them all (each text is one JSON object: no match can span two).
    if same and is_jcs_text(joined):
        counts = verifier.checked, verifier.unverified, verifier.usage
        usage = types[:count].count(USAGE_EVENT_TYPE) if USAGE_EVENT_TYPE in types else 0
        last = count - 1
        verifier.checked, verifier.usage = counts[0] + count, counts[2] + usage
        verifier._previous_index = indexes[last]
        verifier._persisted, verifier._hash, verifier.entries = persisteds[last], expected[last], index + count + 1
        every, progress = run.mark_every, run.progress
        if every:
            for position in range(index + every - index % every, index + count + 1, every):
                offset = position - index
                verifier.mark_at(position, counts[0] + offset, counts[1],
                                 counts[2] + types[:offset].count(USAGE_EVENT_TYPE), indexes[offset - 1])
        if progress is not None:
            for position in range(index + 1, index + count + 1):
                progress(position)
        return
    batch: list[_Folded] = []
    before = snapshot
    for offset in range(count):
        after, text = afters[offset], texts[offset]
        batch.append((
            index + 1 + offset, chunk[offset], after, None, after is not before, types[offset] == USAGE_EVENT_TYPE,
            expected[offset], None if text is None else persisteds[offset], text,
        ))
        before = after
    _check(run, batch)
