"""Built-in actions (assign, raise_, send_to, emit, cancel, log, spawn_child, stop_child,
enqueue_actions) as frozen dataclasses carrying their resolve logic, plus the executable action
objects that `transition` returns.

Pure: resolving an action only computes the next context/children and the parameters of what a
host would execute; nothing here performs I/O, sleeps, or runs actors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import AgentError, MachineConfigError
from ._util import UNDEFINED, callable_name, describe_value
from .actors import ChildRef, resolve_logic
from .guards import evaluate_guard

if TYPE_CHECKING:
    from .algorithm import Scope, Work

__all__ = [
    "BuiltinAction",
    "ExecutableAction",
    "assign",
    "cancel",
    "emit",
    "enqueue_actions",
    "log",
    "raise_",
    "send_to",
    "spawn_child",
    "stop_child",
]


def _value(expr: Any, context: Any, event: dict[str, Any], params: Any) -> Any:
    """A value as given, or the result of `expr(context, event, params)` for an expression."""
    if callable(expr) and not isinstance(expr, BuiltinAction):
        return expr(context, event, params)
    return expr


def _defined(**items: Any) -> dict[str, Any]:
    """Params dict without XState's `undefined` members, so it is JSON-equal to XState's."""
    return {k: v for k, v in items.items() if v is not UNDEFINED and v is not None}


class ExecutableAction:
    """One action a host owes after a transition: `.type`, `.params`, `.info`, and `.exec()`.

    Built-in actions' `exec()` does nothing (the pure API executes nothing; the host interprets
    `.type`/`.params`); a custom action's `exec()` calls its implementation with the context and
    event it was resolved against.
    """

    __slots__ = ("_fn", "info", "params", "type")

    def __init__(self, type: str, params: Any, info: dict[str, Any], fn: Callable[..., Any] | None) -> None:
        self.type = type
        self.params = params
        self.info = info
        self._fn = fn

    def exec(self) -> Any:
        if self._fn is None:
            return None
        return self._fn(self.info["context"], self.info["event"], self.params)

    @property
    def is_builtin(self) -> bool:
        return self.type.startswith("xstate.")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ish view: `{type, params}` (params omitted when None)."""
        out: dict[str, Any] = {"type": self.type}
        if self.params is not None:
            out["params"] = self.params
        return out

    def __repr__(self) -> str:
        return f"ExecutableAction(type={self.type!r}, params={self.params!r})"


class BuiltinAction:
    """Base of the built-in actions. `has_execute` says whether XState lists it as executable."""

    type: str = ""
    has_execute: bool = True

    def resolve(
        self, scope: Scope, work: Work, context: Any, event: dict[str, Any], params: Any
    ) -> tuple[Any, list[Any] | None]:
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        raise NotImplementedError

    # names this action refers to, for validation at create_machine
    def referenced_delays(self) -> list[str]:
        return []

    def referenced_actors(self) -> list[str]:
        return []


@dataclass(frozen=True, eq=False)
class Assign(BuiltinAction):
    assignment: Any
    type: str = field(default="xstate.assign", init=False)
    has_execute: bool = field(default=False, init=False)

    def resolve(self, scope: Scope, work: Work, context: Any, event: dict[str, Any], params: Any) -> tuple[Any, None]:
        if context is None:
            raise TypeError(
                "Cannot assign to undefined `context`. Ensure that `context` is defined in the machine config."
            )
        assignment = self.assignment
        if callable(assignment):
            partial = assignment(context, event, params)
        else:
            partial = {
                key: (updater(context, event, params) if callable(updater) else updater)
                for key, updater in assignment.items()
            }
        new_context = dict(context)  # copy-on-assign: the old snapshot's context is never touched
        if partial:
            new_context.update(partial)
        work.context = new_context
        work.changed = True
        return UNDEFINED, None

    def describe(self) -> dict[str, Any]:
        if callable(self.assignment):
            return {"type": self.type, "params": {"assignment": callable_name(self.assignment)}}
        return {"type": self.type, "params": {"assignment": describe_value(self.assignment)}}


def _resolve_delay(scope: Scope, delay: Any, context: Any, event: dict[str, Any], params: Any) -> Any:
    if isinstance(delay, str):
        configured = scope.machine.implementations.delays.get(delay, UNDEFINED)
        return configured(context, event, params) if callable(configured) else configured
    if delay is None:
        return UNDEFINED
    return _value(delay, context, event, params)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True, eq=False)
class Raise(BuiltinAction):
    event: Any
    delay: Any = None
    id: Any = None
    type: str = field(default="xstate.raise", init=False)

    def resolve(self, scope: Scope, work: Work, context: Any, event: dict[str, Any], params: Any) -> tuple[Any, None]:
        if isinstance(self.event, str):
            raise AgentError(
                f'Only event objects may be used with raise; use raise_({{"type": "{self.event}"}}) instead',
                code="invalid-action",
            )
        resolved_event = _value(self.event, context, event, params)
        delay = _resolve_delay(scope, self.delay, context, event, params)
        if not _is_number(delay):
            scope.internal_queue.append(resolved_event)
        return _defined(event=resolved_event, id=self.id if self.id is not None else UNDEFINED, delay=delay), None

    def describe(self) -> dict[str, Any]:
        return {"type": self.type, "params": _defined(event=describe_value(self.event), delay=describe_value(self.delay), id=self.id)}

    def referenced_delays(self) -> list[str]:
        return [self.delay] if isinstance(self.delay, str) else []


@dataclass(frozen=True, eq=False)
class SendTo(BuiltinAction):
    to: Any
    event: Any
    delay: Any = None
    id: Any = None
    type: str = field(default="xstate.sendTo", init=False)

    def resolve(self, scope: Scope, work: Work, context: Any, event: dict[str, Any], params: Any) -> tuple[Any, None]:
        if isinstance(self.event, str):
            raise AgentError(
                f'Only event objects may be used with send_to; use send_to(to, {{"type": "{self.event}"}}) instead',
                code="invalid-action",
            )
        resolved_event = _value(self.event, context, event, params)
        delay = _resolve_delay(scope, self.delay, context, event, params)
        target = _value(self.to, context, event, params)
        if not isinstance(target, str):
            raise AgentError(f"send_to target must be an actor id string, got {target!r}", code="invalid-action")
        if target == "#_parent":
            found = False  # the pure API's throwaway actor has no parent
        elif target == "#_internal":
            found = True
        elif target.startswith("#_"):
            found = target[2:] in work.children
        else:
            found = target in scope.deferred_actor_ids or target in work.children
        if not found:
            raise AgentError(
                f"Unable to send event to actor '{target}' from machine '{scope.machine.id}': no child "
                f"with that id is active (send_to only reaches children in snapshot.children).",
                code="unknown-actor",
                actor_id=target,
            )
        return _defined(to=target, targetId=target, event=resolved_event, id=self.id, delay=delay), None

    def describe(self) -> dict[str, Any]:
        return {"type": self.type, "params": _defined(to=describe_value(self.to), event=describe_value(self.event), delay=describe_value(self.delay), id=self.id)}

    def referenced_delays(self) -> list[str]:
        return [self.delay] if isinstance(self.delay, str) else []


@dataclass(frozen=True, eq=False)
class Emit(BuiltinAction):
    event: Any
    type: str = field(default="xstate.emit", init=False)

    def resolve(self, scope: Scope, work: Work, context: Any, event: dict[str, Any], params: Any) -> tuple[Any, None]:
        return {"event": _value(self.event, context, event, params)}, None

    def describe(self) -> dict[str, Any]:
        return {"type": self.type, "params": {"event": describe_value(self.event)}}


@dataclass(frozen=True, eq=False)
class Cancel(BuiltinAction):
    send_id: Any
    type: str = field(default="xstate.cancel", init=False)

    def resolve(self, scope: Scope, work: Work, context: Any, event: dict[str, Any], params: Any) -> tuple[Any, None]:
        return {"sendId": _value(self.send_id, context, event, params)}, None

    def describe(self) -> dict[str, Any]:
        return {"type": self.type, "params": {"sendId": describe_value(self.send_id)}}


def _default_log_value(context: Any, event: dict[str, Any], params: Any) -> Any:
    return {"context": context, "event": event}


@dataclass(frozen=True, eq=False)
class Log(BuiltinAction):
    value: Any = _default_log_value
    label: Any = None
    type: str = field(default="xstate.log", init=False)

    def resolve(self, scope: Scope, work: Work, context: Any, event: dict[str, Any], params: Any) -> tuple[Any, None]:
        return _defined(value=_value(self.value, context, event, params), label=self.label), None

    def describe(self) -> dict[str, Any]:
        return {"type": self.type, "params": _defined(value=describe_value(self.value), label=self.label)}


@dataclass(frozen=True, eq=False)
class SpawnChild(BuiltinAction):
    src: Any
    id: Any = None
    input: Any = None
    system_id: Any = None
    sync_snapshot: bool = False
    type: str = field(default="xstate.spawnChild", init=False)

    def resolve(self, scope: Scope, work: Work, context: Any, event: dict[str, Any], params: Any) -> tuple[Any, None]:
        logic = resolve_logic(scope.machine, self.src)
        resolved_id = _value(self.id, context, event, params) if self.id is not None else UNDEFINED
        resolved_input = UNDEFINED
        if logic is not None:
            resolved_input = _value(self.input, context, event, params) if self.input is not None else UNDEFINED
        if resolved_id is UNDEFINED:
            # XState keys such a child by the string "undefined"; mirror it so hashes agree.
            resolved_id = "undefined"
        child = ChildRef.create(
            logic,
            id=resolved_id,
            src=self.src,
            input=resolved_input,
            system_id=self.system_id,
            sync_snapshot=self.sync_snapshot,
        )
        children = dict(work.children)
        children[resolved_id] = child
        work.children = children
        work.changed = True
        return _defined(
            id=self.id if not callable(self.id) else resolved_id,
            systemId=self.system_id,
            src=self.src,
            input=resolved_input,
        ), None

    def describe(self) -> dict[str, Any]:
        return {"type": self.type, "params": _defined(src=describe_value(self.src), id=describe_value(self.id), input=describe_value(self.input), systemId=self.system_id)}

    def referenced_actors(self) -> list[str]:
        return [self.src] if isinstance(self.src, str) else []


@dataclass(frozen=True, eq=False)
class StopChild(BuiltinAction):
    actor_id: Any
    type: str = field(default="xstate.stopChild", init=False)

    def resolve(self, scope: Scope, work: Work, context: Any, event: dict[str, Any], params: Any) -> tuple[Any, None]:
        actor_id = _value(self.actor_id, context, event, params)
        work.changed = True  # XState clones the snapshot even when no such child exists
        if actor_id in work.children:
            children = dict(work.children)
            del children[actor_id]
            work.children = children
            return {"id": actor_id}, None
        return None, None

    def describe(self) -> dict[str, Any]:
        return {"type": self.type, "params": {"id": describe_value(self.actor_id)}}


class _Enqueue:
    """The `enqueue` handed to an enqueue_actions collector: call it, or use its shortcuts."""

    def __init__(self) -> None:
        self.actions: list[Any] = []

    def __call__(self, action: Any) -> None:
        self.actions.append(action)

    def assign(self, assignment: Any) -> None:
        self.actions.append(assign(assignment))

    def raise_(self, event: Any, delay: Any = None, id: Any = None) -> None:
        self.actions.append(raise_(event, delay=delay, id=id))

    def send_to(self, to: Any, event: Any, delay: Any = None, id: Any = None) -> None:
        self.actions.append(send_to(to, event, delay=delay, id=id))

    def emit(self, event: Any) -> None:
        self.actions.append(emit(event))

    def cancel(self, send_id: Any) -> None:
        self.actions.append(cancel(send_id))

    def log(self, value: Any = None, label: Any = None) -> None:
        self.actions.append(log(value, label))

    def spawn_child(self, src: Any, id: Any = None, input: Any = None) -> None:
        self.actions.append(spawn_child(src, id=id, input=input))

    def stop_child(self, actor_id: Any) -> None:
        self.actions.append(stop_child(actor_id))


@dataclass(frozen=True)
class EnqueueArgs:
    """What an enqueue_actions collector receives first: context, event, enqueue, check(guard)."""

    context: Any
    event: dict[str, Any]
    enqueue: _Enqueue
    check: Callable[[Any], bool]


@dataclass(frozen=True, eq=False)
class EnqueueActions(BuiltinAction):
    collect: Callable[[EnqueueArgs, Any], Any]
    type: str = field(default="xstate.enqueueActions", init=False)
    has_execute: bool = field(default=False, init=False)

    def resolve(self, scope: Scope, work: Work, context: Any, event: dict[str, Any], params: Any) -> tuple[Any, list[Any]]:

        enqueue = _Enqueue()
        snapshot_view = work.guard_view(scope)
        self.collect(
            EnqueueArgs(
                context=context,
                event=event,
                enqueue=enqueue,
                check=lambda guard: evaluate_guard(guard, context, event, snapshot_view),
            ),
            params,
        )
        return UNDEFINED, enqueue.actions

    def describe(self) -> dict[str, Any]:
        return {"type": self.type, "params": {"collect": callable_name(self.collect)}}


# -- creators (the public names of docs/api.md §1) --------------------------------------------


def assign(assignment: dict[str, Any] | Callable[..., dict[str, Any]]) -> Assign:
    """Update context: a dict of per-key values/updaters `fn(context, event, params)`, or one
    function returning a partial context. Copy-on-assign: the previous context is untouched."""
    if not callable(assignment) and not isinstance(assignment, dict):
        raise MachineConfigError(f"assign() takes a dict or a function, got {type(assignment).__name__}")
    return Assign(assignment)


def raise_(event: Any, delay: Any = None, id: Any = None) -> Raise:
    """Send an event to this machine itself: now (internal queue) or after `delay` ms / a named delay."""
    return Raise(event, delay, id)


def send_to(to: Any, event: Any, delay: Any = None, id: Any = None) -> SendTo:
    """Send an event to a child actor by id (`"#_internal"` is the machine itself)."""
    return SendTo(to, event, delay, id)


def emit(event: Any) -> Emit:
    """Emit an event to the machine's listeners (the host's job)."""
    return Emit(event)


def cancel(send_id: Any) -> Cancel:
    """Cancel a delayed raise/send_to by its id."""
    return Cancel(send_id)


def log(value: Any = None, label: str | None = None) -> Log:
    """Log a value (None: XState's default, `{"context": ..., "event": ...}`)."""
    return Log(_default_log_value if value is None else value, label)


def spawn_child(src: Any, id: Any = None, input: Any = None, system_id: str | None = None, sync_snapshot: bool = False) -> SpawnChild:
    """Start a child actor from a named source (pure: only recorded in `snapshot.children`)."""
    return SpawnChild(src, id, input, system_id, sync_snapshot)


def stop_child(actor_id: Any) -> StopChild:
    """Stop a child actor by id (or `fn(context, event, params)` returning one)."""
    return StopChild(actor_id)


def enqueue_actions(collect: Callable[[EnqueueArgs, Any], Any]) -> EnqueueActions:
    """Choose actions at run time: `collect(args, params)` calls `args.enqueue(...)`, `args.check(guard)`."""
    return EnqueueActions(collect)
