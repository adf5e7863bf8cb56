"""The pure entry points: initial_transition, transition, transition_with_trace, get_microsteps.

Pure; executes nothing. Each returns new snapshots plus the actions a host would owe, exactly as
XState v5's `initialTransition` / `transition` / `getMicrosteps` do.
"""

from __future__ import annotations

from typing import Any

from ..errors import AgentError
from ._util import UNDEFINED
from .actions import ExecutableAction
from .algorithm import Microstep, Scope, initial_step, macrostep
from .machine import Machine
from .snapshot import Snapshot

__all__ = ["get_initial_microsteps", "get_microsteps", "initial_transition", "transition", "transition_with_trace"]


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
    return macrostep(scope, snapshot, _check_event(event)), scope.actions


def transition_with_trace(
    machine: Machine, snapshot: Snapshot | None, event: dict[str, Any] | None = None, input: Any = None
) -> tuple[Snapshot, list[ExecutableAction], list[dict[str, Any]]]:
    """Like transition (or initial_transition when `snapshot` is None), plus a microstep trace:
    `[{event, transitions: [ids], exited: [state ids], entered: [state ids]}, ...]`."""
    scope = Scope(machine, trace=True)
    if snapshot is None:
        result = initial_step(scope, machine, UNDEFINED if input is None else input)
    else:
        result = macrostep(scope, snapshot, _check_event(event))
    assert scope.trace is not None
    return result, scope.actions, [step.to_dict() for step in scope.trace]


def get_microsteps(machine: Machine, snapshot: Snapshot, event: dict[str, Any]) -> list[Microstep]:
    """Each microstep of one event: `.snapshot`, `.actions`, `.event`, `.transitions`, `.exited`, `.entered`."""
    scope = Scope(machine, trace=True)
    macrostep(scope, snapshot, _check_event(event))
    assert scope.trace is not None
    return scope.trace


def get_initial_microsteps(machine: Machine, input: Any = None) -> list[Microstep]:
    scope = Scope(machine, trace=True)
    initial_step(scope, machine, UNDEFINED if input is None else input)
    assert scope.trace is not None
    return scope.trace
