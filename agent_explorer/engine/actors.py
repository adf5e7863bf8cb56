"""Actor logic as the pure engine sees it: `from_promise`, the logic protocol, and ChildRef, the
record a snapshot keeps for each invoked/spawned child.

Under the pure API nothing runs: a child is only its source name, id, input and the persisted
snapshot XState would store for it (for a promise: `{"status": "active", "input": ...}`). This
module must never start a task, await, or call a promise creator.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..errors import AgentError
from ._util import UNDEFINED

if TYPE_CHECKING:
    from .machine import Machine

__all__ = ["ActorLogic", "ChildRef", "PromiseLogic", "from_promise", "initial_persisted_snapshot", "resolve_logic"]


@runtime_checkable
class ActorLogic(Protocol):
    """Optional hook for logic objects: the persisted snapshot of a fresh, never-started child.

    Logic objects without it (any object is accepted in `actors=`) persist like a promise:
    `{"status": "active", "input": input}`.
    """

    def initial_persisted_snapshot(self, input: Any) -> dict[str, Any]: ...


@dataclass(frozen=True, eq=False)
class PromiseLogic:
    """A host-run task: `fn(input=...)` returning an awaitable (run by the runtime, never here)."""

    fn: Callable[..., Awaitable[Any]]
    kind: str = "promise"

    def initial_persisted_snapshot(self, input: Any) -> dict[str, Any]:
        return _fresh_promise_snapshot(input)


def _fresh_promise_snapshot(input: Any) -> dict[str, Any]:
    # XState's promise logic starts as {status, output: undefined, error: undefined, input}.
    if input is UNDEFINED:
        return {"status": "active"}
    return {"status": "active", "input": input}


def from_promise(fn: Callable[..., Awaitable[Any]]) -> PromiseLogic:
    """Actor logic for a plain task; called by a host as `await fn(input=...)`."""
    return PromiseLogic(fn)


def initial_persisted_snapshot(logic: Any, input: Any) -> dict[str, Any]:
    """The persisted snapshot XState's pure API records for a child created from `logic`."""
    hook = getattr(logic, "initial_persisted_snapshot", None)
    if hook is not None:
        persisted: dict[str, Any] = hook(input)
        return persisted
    return _fresh_promise_snapshot(input)


def resolve_logic(machine: Machine, src: Any) -> Any:
    """Logic for a source name (or an inline logic object), like XState's resolveReferencedActor."""
    if not isinstance(src, str):
        return src
    logic = machine.implementations.actors.get(src)
    if logic is not None:
        return logic
    return machine._inline_actors.get(src)


@dataclass(frozen=True)
class ChildRef:
    """A child actor as recorded in a snapshot. `snapshot` is its persisted form (JSON, read-only)."""

    id: str
    src: str
    snapshot: dict[str, Any]
    input: Any = UNDEFINED
    system_id: str | None = None
    sync_snapshot: bool = False
    logic: Any = None

    @classmethod
    def create(
        cls,
        logic: Any,
        *,
        id: str,
        src: Any,
        input: Any,
        system_id: str | None,
        sync_snapshot: bool,
    ) -> ChildRef:
        return cls(
            id=id,
            src=src if isinstance(src, str) else "",  # inline logic: not persistable (see persisted)
            snapshot=initial_persisted_snapshot(logic, input),
            input=input,
            system_id=system_id,
            sync_snapshot=bool(sync_snapshot),
            logic=logic,
        )

    def persisted(self) -> dict[str, Any]:
        """The `children[id]` entry of XState's getPersistedSnapshot (built once; read-only)."""
        cached: dict[str, Any] | None = self.__dict__.get("_persisted")
        if cached is None:
            if not self.src:
                raise AgentError(
                    f"Child actor '{self.id}' was spawned from inline logic and cannot be persisted "
                    f"(as in XState). Register the logic by name in setup(actors=...) and spawn it by name.",
                    code="non-persistable-child",
                )
            cached = {"snapshot": self.snapshot, "src": self.src, "syncSnapshot": self.sync_snapshot}
            if self.system_id is not None:
                cached["systemId"] = self.system_id
            object.__setattr__(self, "_persisted", cached)  # a cache, not state: the ref stays frozen
        return cached

    def get_snapshot(self) -> dict[str, Any]:
        return self.snapshot
