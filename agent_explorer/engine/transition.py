"""The pure entry points: initial_transition, transition, transition_with_trace, get_microsteps.

Pure; executes nothing. Each returns new snapshots plus the actions a host would owe, exactly as
XState v5's `initialTransition` / `transition` / `getMicrosteps` do, corners included (each pinned
against XState 5.33.3 in tests/engine):

- An exception inside `initial_transition` (context factory, entry action, guard) yields a snapshot
  with status "error" and `.error` set (persisted as `{}`, like `JSON.stringify(new Error())`); the
  actions collected before it are still returned. In `transition` it propagates; the caller keeps
  its previous snapshot.
- Events after "done" are still processed: handlers of the active nodes run, and each microstep on a
  done snapshot re-runs every exit action; the returned actions also stop every child, while the
  snapshot keeps its `children` (XState discards the stopped copy).
- An `xstate.error.actor.*` event that no transition handles sets status "error" with the event's
  `error` and removes all children.
- Completions of a child that is no longer present, and `xstate.after.*` events of a state already
  left, select no transition: same snapshot, no actions.
- `send_to` a child that is not in `snapshot.children` raises (as XState's resolveSendTo does);
  `"#_parent"` always raises under the pure API (the throwaway actor has no parent).
- `spawn_child` without `id` keys the child by the string "undefined", as XState's pure API does.

A snapshot restored from persisted JSON is XState's restored snapshot: its active nodes are rebuilt
from the value, so their order (and, after multi-target transitions XState does not reject, the
set) can differ from the live snapshot's. That shows later in the order of deep-history records
(so in state hashes), of eventless transitions and of actions. XState behaves the same. When a fold from a checkpoint must equal the full fold, checkpoint with
`machine.get_persisted_snapshot(snapshot, exact=True)` (adds `"_nodes"`; never hash that form).

A snapshot made by another Machine object (e.g. before `provide`) is first re-bound to the given
machine's nodes (`machine.adopt`), so the given machine's implementations run; XState would keep
using the snapshot's own machine.

State ids and targets follow XState's rules (StateNode, resolveTarget, getStateNodeById): a `#`
target is split on its unescaped dots, the first part is an id and the rest a child path, so
`#foo.bar` is the child `bar` of the state with id `foo` and `#foo\\.bar` the state with id
`foo.bar`; an unknown id is a MachineConfigError at `create_machine`. Ids may collide (equal
explicit ids, or a key "a.b" beside the path a > b): the later state takes the id, as in XState's id
map, so `#id` targets and `state_in` mean it and the earlier one is reached by path; node order is
XState's too (a state registered after a collision shares its predecessor's order). Limit: where
the engine names states by id (microstep traces, transition ids, `machine.definition`, the
explorer's chart) two such states carry the same name; give them distinct ids to tell them apart.

A final state may declare `initial` and child states, as XState accepts: entering it never enters
them (a default entry runs the initial's actions); a target naming one of its children enters that
child under it, as XState does. An `initial` naming no child of a final state is rejected at
`create_machine` (XState throws when the state is entered).

Not reproduced: `spawn` inside `assign` (use `spawn_child`), actor references in context,
`sendParent` from child machines, `systemId` registry collisions, snapshot events for `onSnapshot`
(pure: nothing runs), and XState's wrapping of guard exceptions in its own message (the original
exception propagates). Python's None stands for JavaScript's `undefined` in optional params.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import AgentError
from ._util import UNDEFINED
from .actions import ExecutableAction
from .algorithm import Microstep, Scope, initial_step, macrostep

if TYPE_CHECKING:  # annotations only: the machine module calls back into this one
    from .machine import Machine
    from .snapshot import Snapshot

__all__ = [
    "get_initial_microsteps", "get_microsteps", "initial_transition", "next_snapshot", "snapshot_stepper", "transition",
    "transition_stepper", "transition_with_trace",
]


def _check_event(event: Any) -> dict[str, Any]:
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise AgentError(f'An event must be a dict with a string "type", got {event!r}', code="invalid-event")
    return event


def initial_transition(machine: Machine, input: Any = None) -> tuple[Snapshot, list[ExecutableAction]]:
    """The initial snapshot and the actions owed. An exception inside yields status "error"."""
    scope = Scope(machine)
    snapshot = initial_step(scope, machine, UNDEFINED if input is None else input)
    return snapshot, scope.actions


def transition(machine: Machine, snapshot: Snapshot, event: dict[str, Any]) -> tuple[Snapshot, list[ExecutableAction]]:
    """The next snapshot and the actions owed for one event. Exceptions propagate (as in XState)."""
    scope = Scope(machine)
    return macrostep(scope, machine.adopt(snapshot), _check_event(event)), scope.actions


def next_snapshot(machine: Machine, snapshot: Snapshot, event: dict[str, Any]) -> Snapshot:
    """`transition(...)[0]` without building the actions: for a fold that keeps only snapshots (verification)."""
    return macrostep(Scope(machine, collect=False), machine.adopt(snapshot), _check_event(event))


def snapshot_stepper(machine: Machine) -> Callable[[Snapshot, dict[str, Any]], Snapshot]:
    """`next_snapshot` for one loop that already holds snapshots of `machine` (`machine.adopt` gave them) and has
    checked that each event is a dict with a string type (the verifying fold, verifying_fold.py, folds every
    entry of a log through it). It skips those per-step checks and makes one Scope for all its steps (a Scope
    costs ~0.8 us to make, a tenth of a step): with `collect=False` a macrostep leaves nothing in it but the
    raised events a final state (or an exception) cut short, which are dropped before the next step."""
    scope = Scope(machine, collect=False)
    queue = scope.internal_queue

    def step(snapshot: Snapshot, event: dict[str, Any]) -> Snapshot:
        if queue:
            queue.clear()
        return macrostep(scope, snapshot, event)

    return step


def transition_stepper(
    machine: Machine,
) -> Callable[[Snapshot, dict[str, Any]], tuple[Snapshot, list[ExecutableAction]]]:
    """`transition` for one loop, as `snapshot_stepper` is `next_snapshot` for one (same preconditions, one
    Scope): a verifying fold that must return the actions it folded (replay) or hand them on (a Timeline)."""
    scope = Scope(machine)
    queue = scope.internal_queue

    def step(snapshot: Snapshot, event: dict[str, Any]) -> tuple[Snapshot, list[ExecutableAction]]:
        if queue:
            queue.clear()
        owed: list[ExecutableAction] = []
        scope.actions = owed
        return macrostep(scope, snapshot, event), owed

    return step


def transition_with_trace(
    machine: Machine, snapshot: Snapshot | None, event: dict[str, Any] | None = None, input: Any = None
) -> tuple[Snapshot, list[ExecutableAction], list[dict[str, Any]]]:
    """Like transition (or initial_transition when `snapshot` is None), plus a microstep trace:
    `[{event, transitions: [ids], exited: [state ids], entered: [state ids]}, ...]`."""
    result, actions, trace = _traced(machine, snapshot, event, input)
    return result, actions, [step.to_dict() for step in trace]


def get_microsteps(machine: Machine, snapshot: Snapshot, event: dict[str, Any]) -> list[Microstep]:
    """Each microstep of one event: `.snapshot`, `.actions`, `.event`, `.transitions`, `.exited`, `.entered`."""
    return _traced(machine, snapshot, event, None)[2]


def get_initial_microsteps(machine: Machine, input: Any = None) -> list[Microstep]:
    return _traced(machine, None, None, input)[2]


def _traced(
    machine: Machine, snapshot: Snapshot | None, event: dict[str, Any] | None, input: Any
) -> tuple[Snapshot, list[ExecutableAction], list[Microstep]]:
    """One traced step: the initial one when `snapshot` is None, else one event's macrostep."""
    scope = Scope(machine, trace=True)
    if snapshot is None:
        result = initial_step(scope, machine, UNDEFINED if input is None else input)
    else:
        result = macrostep(scope, machine.adopt(snapshot), _check_event(event))
    assert scope.trace is not None
    return result, scope.actions, scope.trace
