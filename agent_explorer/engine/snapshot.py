"""Snapshot: the immutable state of a machine after a transition, and Configuration, the interned
set of active state nodes (in XState's `_nodes` order) with its state value, tags and caches.

Never mutated after construction: `transition` builds new snapshots; contexts are replaced on
assign, never edited in place. Treat `.value`, `.context` and `.children` as read-only (they are
shared between snapshots and caches for speed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._util import UNDEFINED
from .nodes import to_state_path

if TYPE_CHECKING:
    from .actors import ChildRef
    from .machine import Machine
    from .nodes import StateNode, Transition

__all__ = ["Configuration", "Snapshot", "matches_state", "to_state_value"]


class Configuration:
    """A set of active nodes in XState's `_nodes` order, interned per machine.

    Holds everything that depends only on the configuration: the state value, tags, atomic
    nodes, and per-event-type selection plans, so a fold over a long log does that work once.
    """

    __slots__ = ("always_chains", "atomic", "node_set", "nodes", "plans", "steps", "tags", "value")

    def __init__(self, nodes: tuple[StateNode, ...], value: Any) -> None:
        self.nodes = nodes
        self.node_set = frozenset(nodes)
        self.value = value
        self.tags = frozenset(t for n in nodes for t in n.tags)
        self.atomic = tuple(n for n in nodes if n.is_atomic)
        self.plans: dict[str, Any] = {}
        self.steps: dict[tuple[Any, ...], Any] = {}
        chains = []
        for atomic in self.atomic:
            chain = tuple(s.always for s in (atomic,) + atomic.ancestors if s.always)
            if chain:
                chains.append(chain)
        self.always_chains: tuple[tuple[list[Transition], ...], ...] = tuple(chains)


def to_state_value(value: Any) -> Any:
    """`"a.b"` -> `{"a": "b"}` (XState's toStateValue); dicts pass through."""
    if isinstance(value, Snapshot):
        return value.value
    if not isinstance(value, str):
        return value

    path = to_state_path(value)
    if len(path) == 1:
        return path[0]
    out: dict[str, Any] = {}
    marker = out
    for i in range(len(path) - 1):
        if i == len(path) - 2:
            marker[path[i]] = path[i + 1]
        else:
            nxt: dict[str, Any] = {}
            marker[path[i]] = nxt
            marker = nxt
    return out


def matches_state(parent_value: Any, child_value: Any) -> bool:
    """XState's matchesState: is `child_value` (the current value) inside `parent_value`?"""
    parent = to_state_value(parent_value)
    child = to_state_value(child_value)
    if isinstance(child, str):
        return isinstance(parent, str) and child == parent
    if isinstance(parent, str):
        return parent in child
    return all(key in child and matches_state(sub, child[key]) for key, sub in parent.items())


class Snapshot:
    """An immutable machine snapshot: `.value .context .status .output .error .children .tags`."""

    __slots__ = ("_children", "_config", "_context", "_error", "_history", "_machine", "_output", "_status")

    def __init__(
        self,
        machine: Machine,
        config: Configuration,
        context: Any,
        *,
        status: str = "active",
        children: dict[str, ChildRef] | None = None,
        history: dict[str, tuple[StateNode, ...]] | None = None,
        output: Any = UNDEFINED,
        error: Any = UNDEFINED,
    ) -> None:
        self._machine = machine
        self._config = config
        self._context = context
        self._status = status
        self._children = children if children is not None else {}
        self._history = history if history is not None else {}
        self._output = output
        self._error = error

    @property
    def machine(self) -> Machine:
        return self._machine

    @property
    def value(self) -> Any:
        """A string for an atomic top-level state, else a nested dict, like XState's `value`."""
        return self._config.value

    @property
    def context(self) -> Any:
        return self._context

    @property
    def status(self) -> str:
        return self._status

    @property
    def output(self) -> Any:
        """The machine's output once done; None when it has none."""
        return None if self._output is UNDEFINED else self._output

    @property
    def error(self) -> Any:
        return None if self._error is UNDEFINED else self._error

    @property
    def children(self) -> dict[str, ChildRef]:
        return self._children

    @property
    def history_value(self) -> dict[str, tuple[StateNode, ...]]:
        return self._history

    @property
    def tags(self) -> frozenset[str]:
        return self._config.tags

    @property
    def nodes(self) -> tuple[StateNode, ...]:
        """Active state nodes in XState's `_nodes` order."""
        return self._config.nodes

    @property
    def state_ids(self) -> list[str]:
        return [n.id for n in self._config.nodes]

    def matches(self, value: Any) -> bool:
        return matches_state(value, self._config.value)

    def has_tag(self, tag: str) -> bool:
        return tag in self._config.tags

    def can(self, event: dict[str, Any]) -> bool:
        """Would `event` take a transition that has a target or actions (guards evaluated)?"""
        return bool(self._machine.can(self, event))

    def get_meta(self) -> dict[str, Any]:
        return {n.id: n.meta for n in self._config.nodes if n.meta is not None}

    def to_persisted(self) -> dict[str, Any]:
        return self._machine.get_persisted_snapshot(self)

    def __repr__(self) -> str:
        return f"Snapshot(value={self.value!r}, status={self._status!r}, context={self._context!r})"

    def __copy__(self) -> Snapshot:
        return self  # immutable

    def __deepcopy__(self, memo: dict[int, Any]) -> Snapshot:
        return self  # immutable; the machine is shared by design

    def __reduce__(self) -> Any:
        raise TypeError("Snapshots hold their machine; persist with machine.get_persisted_snapshot(snapshot)")
