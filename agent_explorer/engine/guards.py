"""Guards: named/inline predicates and the combinators and_, or_, not_, state_in.

Pure: a guard reads context, event and the active configuration, never changes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import AgentError
from ._util import callable_name, describe_value

__all__ = ["BuiltinGuard", "and_", "describe_guard", "evaluate_guard", "guard_names", "not_", "or_", "state_in"]


class BuiltinGuard:
    """Base of the combinators; `check(snapshot, context, event)` decides."""

    type: str = ""

    def check(self, snapshot: Any, context: Any, event: dict[str, Any]) -> bool:
        raise NotImplementedError

    def children(self) -> list[Any]:
        return []

    def describe(self) -> dict[str, Any]:
        raise NotImplementedError


@dataclass(frozen=True, eq=False)
class _Combination(BuiltinGuard):
    """And/Or: a tuple of guards, listed and described alike."""

    guards: tuple[Any, ...]

    def children(self) -> list[Any]:
        return list(self.guards)

    def describe(self) -> dict[str, Any]:
        return {"type": self.type, "params": {"guards": [describe_guard(g) for g in self.guards]}}


@dataclass(frozen=True, eq=False)
class And(_Combination):
    type = "xstate.and"

    def check(self, snapshot: Any, context: Any, event: dict[str, Any]) -> bool:
        return all(evaluate_guard(g, context, event, snapshot) for g in self.guards)


@dataclass(frozen=True, eq=False)
class Or(_Combination):
    type = "xstate.or"

    def check(self, snapshot: Any, context: Any, event: dict[str, Any]) -> bool:
        return any(evaluate_guard(g, context, event, snapshot) for g in self.guards)


@dataclass(frozen=True, eq=False)
class Not(BuiltinGuard):
    guard: Any
    type = "xstate.not"

    def check(self, snapshot: Any, context: Any, event: dict[str, Any]) -> bool:
        return not evaluate_guard(self.guard, context, event, snapshot)

    def children(self) -> list[Any]:
        return [self.guard]

    def describe(self) -> dict[str, Any]:
        return {"type": self.type, "params": {"guards": [describe_guard(self.guard)]}}


@dataclass(frozen=True, eq=False)
class StateIn(BuiltinGuard):
    state_value: Any
    type = "xstate.stateIn"

    def check(self, snapshot: Any, context: Any, event: dict[str, Any]) -> bool:
        value = self.state_value
        if isinstance(value, str) and value.startswith("#"):
            target = snapshot.machine.get_state_node_by_id(value)
            return bool(target in snapshot._config.node_set)
        return bool(snapshot.matches(value))

    def describe(self) -> dict[str, Any]:
        return {"type": self.type, "params": {"stateValue": describe_value(self.state_value)}}


def and_(guards: list[Any]) -> And:
    """True when every guard is (XState's `and`)."""
    return And(tuple(guards))


def or_(guards: list[Any]) -> Or:
    """True when any guard is (XState's `or`)."""
    return Or(tuple(guards))


def not_(guard: Any) -> Not:
    """True when the guard is not (XState's `not`)."""
    return Not(guard)


def state_in(state_value: Any) -> StateIn:
    """True when the machine is in `"#id"` or matches a state value (XState's `stateIn`)."""
    return StateIn(state_value)


def evaluate_guard(guard: Any, context: Any, event: dict[str, Any], snapshot: Any) -> bool:
    """XState's evaluateGuard: inline callables, names (with params), and combinators.

    `snapshot` needs `.machine`, `._config` and `.matches` (a Snapshot or the in-flight view).
    """
    if isinstance(guard, BuiltinGuard):
        return guard.check(snapshot, context, event)
    if callable(guard):  # inline: fn(context, event, None)
        return bool(guard(context, event, None))
    if isinstance(guard, str):
        name, params = guard, None
    else:
        name = guard["type"]
        params = guard.get("params")
        if callable(params):
            params = params(context, event)
    resolved = snapshot.machine.implementations.guards.get(name)
    if resolved is None:
        raise AgentError(
            f"Guard '{name}' is not implemented in machine '{snapshot.machine.id}'. Add it to setup(guards=...).",
            code="guard-not-implemented",
        )
    if isinstance(resolved, BuiltinGuard):
        return resolved.check(snapshot, context, event)
    if not callable(resolved):
        return evaluate_guard(resolved, context, event, snapshot)
    return bool(resolved(context, event, params))


def guard_names(guard: Any) -> list[str]:
    """Every guard name a guard expression refers to (for validation at create_machine)."""
    if guard is None:
        return []
    if isinstance(guard, BuiltinGuard):
        return [n for g in guard.children() for n in guard_names(g)]
    if callable(guard):
        return []
    if isinstance(guard, str):
        return [guard]
    if isinstance(guard, dict) and isinstance(guard.get("type"), str):
        return [guard["type"]]
    return []


def describe_guard(guard: Any) -> dict[str, Any] | None:
    """JSON description `{type, params?}` for `machine.definition`."""
    if guard is None:
        return None
    if isinstance(guard, BuiltinGuard):
        return guard.describe()
    if callable(guard):
        return {"type": callable_name(guard)}
    if isinstance(guard, str):
        return {"type": guard}
    out: dict[str, Any] = {"type": guard["type"]}
    if "params" in guard:
        out["params"] = describe_value(guard["params"])
    return out
