"""The verifying fold: `fold` and `Verifier.check` in one loop, without a generator or a Step per entry.

Job: the one loop of verification (`verify_log` and the fleet through it, `replay(verify=...)`, a verifying
Timeline's build). An ordinary entry (a dict recorded by this machine whose event is a dict with a string
type other than `@agent.init`) is folded with `transition` (a `@agent.usage` one: kept, as fold keeps it) and
checked inline; any other entry, and an entry whose transition raised, goes through `fold` and
`Verifier.check` themselves, so every rule is still written once (fold.py, verification.py). tests/replay/test_verifying_fold.py holds this loop
to the plain path (`fold` + `Verifier.check`) on random logs: tampered, unhashed, reordered, malformed.
Pure: it never executes an action, mutates an entry, or writes what it reads.

Why a second loop at all: on the agent workload of benchmarks/fold.py, the generator and a `Step` per entry
cost ~0.8 us of a ~9 us fold step, and `Verifier.check`'s attribute traffic another ~0.7 us; the hash
itself is ~3 us (benchmarks/README.md, "verification at the speed of the fold").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..engine import transition
from ..engine.transition import next_snapshot
from ..errors import AgentError
from .entries import INIT_EVENT_TYPE, USAGE_EVENT_TYPE
from .fold import FoldErrors, Step, fold, seed

if TYPE_CHECKING:
    from .verification import Verifier

__all__ = ["verifying_fold"]

_ABSENT: Any = object()  # a key the entry lacks never equals the machine's id or version


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
) -> tuple[int, Any, list[Any] | None]:
    """Fold `entries` through `verifier.machine`, checking each as `verifier.check` would; returns
    `(last index, last snapshot, the actions the last transition returned)` (`None`: no transition ran).

    Without `start` the first entry is the init entry (seeded as `fold` seeds it); with `start=(index,
    snapshot)` the entries are the ones after `index` (a Timeline's next chunk). `take(step)`, when given,
    gets a Step for every entry after the verifier checked it (a Timeline's ledger and checkpoints);
    `progress(index)` is called after each entry after the init one. `actions=False` (when no `take`)
    folds ordinary entries without building their actions (`engine.transition.next_snapshot`): a report
    needs only the states, and the last actions come back as None.
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
        if take is not None:
            take(first)
        index, snapshot, last_actions = 0, first.snapshot, first.actions
    else:
        index, snapshot = start
    record = errors == "record"
    machine_id, machine_version = machine.id, machine.version
    get_persisted, hasher = machine.get_persisted_snapshot, verifier.hasher
    strict, sequence = verifier.strict, not verifier.raises
    # The verifier's running state lives in locals during the loop; it is handed back (`_hand_back`) before
    # the verifier itself runs (the plain path, a divergence) and at the end, and taken again after.
    checked, unverified, usage = verifier.checked, verifier.unverified, verifier.usage
    previous, persisted, current = verifier._previous_index, verifier._persisted, verifier._hash
    done = index  # the last entry checked
    try:
        for entry in iterator:
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
            ):  # not an ordinary entry: fold's rules, as written (it raises what it must)
                plain = next(fold(machine, (entry,), start=(index - 1, snapshot), check_version=check_version,
                                  errors=errors))
            elif event_type == USAGE_EVENT_TYPE:  # journaled spend: no transition (fold.py), counted (Verifier)
                after, step_actions = snapshot, None
                usage += 1
            else:
                try:
                    if collect:
                        after, step_actions = transition(machine, snapshot, event)
                    else:
                        after, step_actions = next_snapshot(machine, snapshot, event), None
                except Exception as error:  # noqa: BLE001 - recorded only when asked; raised as is otherwise
                    if not record:
                        raise
                    plain = Step(index, entry, snapshot, None, False, None, error)
            if plain is not None:  # the verifier's rules, as written
                _hand_back(verifier, checked, unverified, usage, previous, persisted, current, done)
                done = index
                verifier.check(plain)
                checked, unverified, usage = verifier.checked, verifier.unverified, verifier.usage
                previous, persisted, current = verifier._previous_index, verifier._persisted, verifier._hash
                if plain.actions is not None:
                    last_actions = plain.actions
                snapshot = plain.snapshot
                if take is not None:
                    take(plain)
                if progress is not None:
                    progress(index)
                continue
            done = index
            if step_actions is not None:
                last_actions = step_actions
            changed = after is not snapshot
            if changed:
                snapshot, persisted, current = after, None, None
            # Verifier.check, inline and in its order: the index field, then the hash.
            recorded_index = entry.get("index")
            if type(recorded_index) is not int and not isinstance(recorded_index, int):
                recorded_index = None
            if sequence and recorded_index is not None and previous is not None and recorded_index != previous + 1:
                _hand_back(verifier, checked, unverified, usage, previous, persisted, current, done)
                verifier._sequence(Step(index, entry, after, step_actions, changed), recorded_index, previous + 1)
            previous = recorded_index
            verification = entry.get("verification")
            expected = (
                verification.get("stateHash")
                if type(verification) is dict or isinstance(verification, Mapping) else None
            )
            if expected is None:
                unverified += 1
                if strict:
                    _hand_back(verifier, checked, unverified, usage, previous, persisted, current, done)
                    verifier.missing(Step(index, entry, after, step_actions, changed))
            else:
                if current is None:
                    persisted = get_persisted(after)
                    # orjson's speed; exact (and strict) wherever it differs from the record (verify_hash.py)
                    current = hasher(persisted, expected)
                checked += 1
                if current != expected:
                    _hand_back(verifier, checked, unverified, usage, previous, persisted, current, done)
                    verifier.diverged(Step(index, entry, after, step_actions, changed), expected, current, persisted)
            if take is not None:
                take(Step(index, entry, after, step_actions, changed))
            if progress is not None:
                progress(index)
    finally:
        _hand_back(verifier, checked, unverified, usage, previous, persisted, current, done)
    return done, snapshot, last_actions


def _hand_back(
    verifier: Verifier, checked: int, unverified: int, usage: int, previous: Any, persisted: dict[str, Any] | None,
    current: str | None, done: int,
) -> None:
    """Write the loop's running state into the verifier (what `Verifier.check` would have left there)."""
    verifier.checked, verifier.unverified, verifier.usage = checked, unverified, usage
    verifier._previous_index = previous
    verifier._persisted, verifier._hash, verifier.entries = persisted, current, done + 1
