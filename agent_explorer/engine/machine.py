"""Setup, Machine and create_machine: implementations by name, config validation up front,
structural version, persistence (get_persisted_snapshot / restore_snapshot) and configuration
interning.

Building a machine is the only place config errors surface (MachineConfigError naming the state
path and the fix); afterwards a Machine is immutable. Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import AgentError, MachineConfigError
from ._util import UNDEFINED
from .actions import BuiltinAction, EnqueueActions
from .actors import ChildRef, resolve_logic
from .algorithm import get_all_state_nodes, get_state_nodes, get_state_value, select_transitions
from .definition import build_definition, structural_hash
from .guards import BuiltinGuard, StateIn, and_, guard_names
from .nodes import StateNode, Transition, get_state_node_by_path, to_state_path
from .snapshot import Configuration, Snapshot
from .transition import initial_transition

__all__ = ["Implementations", "Machine", "Setup", "create_machine", "setup"]


@dataclass(frozen=True)
class Implementations:
    """Named implementations: guards, actions, actors (logic objects), delays."""

    guards: Mapping[str, Any] = field(default_factory=dict)
    actions: Mapping[str, Any] = field(default_factory=dict)
    actors: Mapping[str, Any] = field(default_factory=dict)
    delays: Mapping[str, Any] = field(default_factory=dict)

    def merged(self, guards: Mapping[str, Any] | None = None, actions: Mapping[str, Any] | None = None,
               actors: Mapping[str, Any] | None = None, delays: Mapping[str, Any] | None = None) -> Implementations:
        return Implementations(
            guards={**self.guards, **(guards or {})},
            actions={**self.actions, **(actions or {})},
            actors={**self.actors, **(actors or {})},
            delays={**self.delays, **(delays or {})},
        )


class Setup:
    """The result of `setup(...)`: implementations (and extensions) waiting for a config.

    Extensible: subclasses (e.g. the runtime's setup_agent) may add entries to `extensions`;
    they are copied onto every machine this setup creates.
    """

    def __init__(
        self,
        guards: Mapping[str, Any] | None = None,
        actions: Mapping[str, Any] | None = None,
        actors: Mapping[str, Any] | None = None,
        delays: Mapping[str, Any] | None = None,
        extensions: Mapping[str, Any] | None = None,
    ) -> None:
        self.implementations = Implementations(
            guards=dict(guards or {}), actions=dict(actions or {}), actors=dict(actors or {}), delays=dict(delays or {})
        )
        self.extensions: dict[str, Any] = dict(extensions or {})

    def create_machine(self, config: Mapping[str, Any]) -> Machine:
        return Machine(config, self.implementations, extensions=self.extensions)


def setup(
    guards: Mapping[str, Any] | None = None,
    actions: Mapping[str, Any] | None = None,
    actors: Mapping[str, Any] | None = None,
    delays: Mapping[str, Any] | None = None,
    extensions: Mapping[str, Any] | None = None,
) -> Setup:
    """Declare implementations by name (XState's `setup`); then `.create_machine(config)`."""
    return Setup(guards=guards, actions=actions, actors=actors, delays=delays, extensions=extensions)


def create_machine(config: Mapping[str, Any], implementations: Implementations | None = None) -> Machine:
    """A machine from a config alone (JSON configs need every name implemented: use setup)."""
    return Machine(config, implementations or Implementations())


class Machine:
    """A statechart: nodes built once from the config, implementations, id, version, definition."""

    def __init__(
        self,
        config: Mapping[str, Any],
        implementations: Implementations,
        extensions: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(config, Mapping):
            raise MachineConfigError(f"A machine config must be a dict, got {type(config).__name__}.")
        self.config: dict[str, Any] = dict(config)
        self.implementations = implementations
        self.extensions: dict[str, Any] = dict(extensions or {})
        self.id: str = self.config.get("id") or "(machine)"
        self.declared_version: str | None = self.config.get("version")
        self.migrate: Callable[[dict[str, Any], Any], dict[str, Any]] | None = self.config.get("migrate")
        self.context_config = self.config.get("context")
        options = self.config.get("options") or {}
        self.max_iterations: float = options.get("maxIterations", math.inf)
        # id -> node as XState's idMap (a later node with the same id replaces the earlier one);
        # all_nodes: every node in document order, shadowed ones included.
        self.id_map: dict[str, StateNode] = {}
        self.all_nodes: list[StateNode] = []
        self._inline_actors: dict[str, Any] = {}
        self._configs: dict[tuple[StateNode, ...], Configuration] = {}
        self.root = StateNode(self, self.config, self.id, None)
        self.root.initialize()
        self.root.initialize_history()
        self._format_route_transitions()
        self.states = self.root.states
        # A compound whose initial state is a history node makes entry sets depend on history.
        self.history_sensitive_initial = any(
            n.initial is not None and n.initial.target is not None and n.initial.target[0].type == "history"
            for n in self.all_nodes
        )
        self._validate_names()
        self._definition: dict[str, Any] | None = None
        self._version: str | None = None

    def _format_route_transitions(self) -> None:
        """XState's `route`: a state with an `id` and `route: {...}` is reachable from anywhere by
        `{"type": "xstate.route", "to": "#id"}` (a root transition guarded on `event.to`)."""

        routes: list[Transition] = []
        for node in self.all_nodes[1:]:
            route = node.config.get("route")
            if route is None or not node.config.get("id"):
                continue
            route_id = node.config["id"]

            def matches(context: Any, event: dict[str, Any], params: Any, _to: str = f"#{route_id}") -> bool:
                return event.get("to") == _to

            config = dict(route) if isinstance(route, Mapping) else {}
            user_guard = config.get("guard")
            config["guard"] = and_([matches, user_guard]) if user_guard is not None else matches
            config["target"] = f"#{route_id}"
            routes.append(
                self.root._format_transition("xstate.route", config, f"#{self.root.id}:on:xstate.route:{len(routes)}")
            )
        if routes:
            self.root.transitions["xstate.route"] = routes

    # -- identity ---------------------------------------------------------------------------------

    @property
    def definition(self) -> dict[str, Any]:
        """JSON view of the chart (see engine/definition.py for the format)."""
        if self._definition is None:

            self._definition = build_definition(self)
        return self._definition

    @property
    def version(self) -> str:
        """The declared `version`, else `state_hash(definition)` (changes with the structure)."""
        if self._version is None:
            if self.declared_version is not None:
                self._version = str(self.declared_version)
            else:

                self._version = structural_hash(self.definition)
        return self._version

    def provide(
        self,
        actors: Mapping[str, Any] | None = None,
        actions: Mapping[str, Any] | None = None,
        guards: Mapping[str, Any] | None = None,
        delays: Mapping[str, Any] | None = None,
    ) -> Machine:
        """A new machine with the same config and some implementations replaced."""
        return Machine(
            self.config,
            self.implementations.merged(guards=guards, actions=actions, actors=actors, delays=delays),
            extensions=self.extensions,
        )

    def get_state_node_by_id(self, state_id: str) -> StateNode:
        """XState's getStateNodeById: `"#id"` or `"id"`, then an optional child path.

        The text is split on its unescaped dots first (`to_state_path`): the first part (less a
        leading `#`) is an id, the rest a path of child keys. So `"#foo.bar"` is the child `bar` of
        the node with id `foo`, even when some state has the id `"foo.bar"` (that one is reached
        by `"#foo\\.bar"`). An unknown id raises MachineConfigError (XState throws an Error).
        """
        path = to_state_path(state_id)
        first = path[0][1:] if path[0].startswith("#") else path[0]
        node = self.id_map.get(first)
        if node is None:
            raise MachineConfigError(
                f"Child state node '#{first}' does not exist on machine '{self.id}'.", path=f"#{first}"
            )
        return get_state_node_by_path(node, path[1:]) if len(path) > 1 else node

    def configuration(self, nodes: tuple[StateNode, ...]) -> Configuration:
        """The interned Configuration for a `_nodes` tuple (value, tags, plans computed once)."""
        config = self._configs.get(nodes)
        if config is None:

            config = Configuration(nodes, get_state_value(self.root, nodes))
            if len(self._configs) < 65536:
                self._configs[nodes] = config
        return config

    # -- persistence -------------------------------------------------------------------------------

    def get_persisted_snapshot(self, snapshot: Snapshot, *, exact: bool = False) -> dict[str, Any]:
        """Exactly the JSON XState v5's `getPersistedSnapshot` gives for the same machine and events.

        Nested values are shared with the snapshot: treat the result as read-only.
        `exact=True` adds `"_nodes"` (the active state ids in XState's internal order) so that
        `restore_snapshot` rebuilds the very same snapshot, which then continues exactly like the
        live one (plain XState restores can differ, see transition.py). For checkpoints only:
        never hash or journal that form.
        """
        persisted: dict[str, Any] = {"status": snapshot._status}
        if snapshot._output is not UNDEFINED:
            persisted["output"] = snapshot._output
        if snapshot._error is not UNDEFINED:
            error = snapshot._error
            # JSON.stringify(new Error(...)) is "{}": an exception persists as an empty object.
            persisted["error"] = {} if isinstance(error, BaseException) else error
        persisted["value"] = snapshot._config.value
        history = snapshot._history
        persisted["historyValue"] = (
            {hid: [{"id": n.id} for n in nodes] for hid, nodes in history.items()} if history else {}
        )
        persisted["context"] = snapshot._context
        children = snapshot._children
        persisted["children"] = {cid: child.persisted() for cid, child in children.items()} if children else {}
        if exact:
            persisted["_nodes"] = [self._exact_name(n) for n in snapshot._config.nodes]
        return persisted

    def restore_snapshot(self, persisted: Mapping[str, Any]) -> Snapshot:
        """The inverse of get_persisted_snapshot (XState's restoreSnapshot; exact with `"_nodes"`)."""

        value = persisted["value"]
        try:
            if "_nodes" in persisted:
                nodes = tuple(self._node_by_exact_name(name) for name in persisted["_nodes"])
            else:
                listed = get_state_nodes(self.root, value)
                nodes = tuple(get_all_state_nodes(dict.fromkeys(listed)))
        except (ValueError, KeyError, TypeError, MachineConfigError) as exc:
            raise AgentError(
                f"Persisted snapshot value {value!r} does not fit machine '{self.id}': {exc}. Was it "
                f"persisted by another machine or version?",
                code="invalid-snapshot",
            ) from None
        history: dict[str, tuple[StateNode, ...]] = {}
        for hid, items in (persisted.get("historyValue") or {}).items():
            # As XState's restoreSnapshot: each `{"id"}` goes through getStateNodeById (so an id is
            # split on its dots like a target), and one that resolves to nothing is dropped.
            resolved = tuple(node for item in items if (node := self._history_node(item)) is not None)
            if resolved:
                history[hid] = resolved
        children: dict[str, ChildRef] = {}

        for cid, data in (persisted.get("children") or {}).items():
            src = data.get("src")
            logic = resolve_logic(self, src)
            if logic is None:
                continue
            child_snapshot = data.get("snapshot") or {}
            children[cid] = ChildRef(
                id=cid,
                src=src,
                snapshot=child_snapshot,
                input=child_snapshot.get("input", UNDEFINED),
                system_id=data.get("systemId"),
                sync_snapshot=bool(data.get("syncSnapshot", False)),
                logic=logic,
            )
        return Snapshot(
            self,
            self.configuration(nodes),
            persisted.get("context", {}),
            status=persisted.get("status", "active"),
            children=children,
            history=history,
            output=persisted.get("output", UNDEFINED),
            error=persisted.get("error", UNDEFINED),
        )

    def adopt(self, snapshot: Snapshot) -> Snapshot:
        """The same snapshot bound to this machine's nodes (e.g. one made by the machine this one
        was `provide`d from), keeping XState's node order; raises if a state does not exist here."""
        if snapshot._machine is self:
            return snapshot
        try:
            nodes = tuple(self._counterpart(n) for n in snapshot._config.nodes)
            history = {hid: tuple(self._counterpart(n) for n in hs) for hid, hs in snapshot._history.items()}
        except KeyError as exc:
            raise AgentError(
                f"Snapshot of machine '{snapshot._machine.id}' is in state {exc.args[0]!r}, which machine "
                f"'{self.id}' does not have. Restore it through a migration instead.",
                code="invalid-snapshot",
            ) from None
        return Snapshot(self, self.configuration(nodes), snapshot._context, status=snapshot._status,
                        children=snapshot._children, history=history, output=snapshot._output,
                        error=snapshot._error)

    def _history_node(self, item: Any) -> StateNode | None:
        node_id = item.get("id") if isinstance(item, Mapping) else None
        if not isinstance(node_id, str):
            return None
        try:
            return self.get_state_node_by_id(node_id)
        except MachineConfigError:
            return None

    def _exact_name(self, node: StateNode) -> str | list[str]:
        """How the exact form names an active node: its id, or its key path from the root when a
        later node took that id (XState's id map keeps one node per id)."""
        return node.id if self.id_map.get(node.id) is node else list(node.path)

    def _node_by_exact_name(self, name: Any) -> StateNode:
        if isinstance(name, list):
            return get_state_node_by_path(self.root, [str(key) for key in name]) if name else self.root
        return self.id_map[name]

    def _counterpart(self, node: StateNode) -> StateNode:
        """This machine's node for another machine's `node`: the one with its id, or the one at its
        key path where a later node took that id (raises KeyError naming the id when none)."""
        mine = self.id_map.get(node.id)
        if mine is not None and (mine.path == node.path or node.machine.id_map.get(node.id) is node):
            return mine
        current = self.root
        for key in node.path:
            child = current.states.get(key)
            if child is None:
                raise KeyError(node.id)
            current = child
        return current

    def can(self, snapshot: Snapshot, event: dict[str, Any]) -> bool:
        """Would `event` take a transition that has a target or actions in `snapshot` (guards evaluated)?"""
        return any(t.target is not None or t.actions for t in select_transitions(event, snapshot))

    def initial_persisted_snapshot(self, input: Any) -> dict[str, Any]:
        """As a child actor logic: the persisted initial snapshot XState records for it."""
        snapshot, _ = initial_transition(self, input=None if input is UNDEFINED else input)
        return self.get_persisted_snapshot(snapshot)

    # -- validation --------------------------------------------------------------------------------

    def _validate_names(self) -> None:
        impl = self.implementations
        for node in self.all_nodes:
            where = f"#{node.id}"
            for inv in node.invoke:
                if inv.logic is not None:
                    self._inline_actors[inv.src] = inv.logic
                elif inv.src not in impl.actors:
                    raise MachineConfigError(
                        f'State "{where}" invokes actor "{inv.src}", which has no implementation. '
                        f'Add it to setup(actors={{"{inv.src}": ...}}).',
                        path=where,
                    )
            for label, actions in (("entry", node.entry), ("exit", node.exit)):
                self._validate_actions(actions, f"{where} {label}", where)
            if node.initial is not None:
                self._validate_actions(node.initial.actions, f"{where} initial", where)
            transitions: list[Transition] = [t for ts in node.transitions.values() for t in ts]
            transitions += node.always or []
            for t in transitions:
                label = f'{where} on "{t.event_type}"' if t.event_type else f"{where} always"
                self._validate_actions(t.actions, label, where)
                for name in guard_names(t.guard):
                    self._validate_guard_name(name, label, where)
                self._validate_state_in(t.guard, label, where)
            for t in node.after:
                if isinstance(t.delay, str) and t.delay not in impl.delays:
                    raise MachineConfigError(
                        f'State "{where}" has an "after" delay named "{t.delay}" with no implementation. '
                        f'Add it to setup(delays={{"{t.delay}": <ms>}}).',
                        path=where,
                    )

    def _validate_state_in(self, guard: Any, label: str, where: str) -> None:
        """`state_in("#id")` must name an existing state (checked inside and_/or_/not_ too)."""

        if isinstance(guard, StateIn):
            value = guard.state_value
            if isinstance(value, str) and value.startswith("#"):
                try:
                    self.get_state_node_by_id(value)
                except MachineConfigError:
                    raise MachineConfigError(
                        f'state_in("{value}") in {label} names no state of machine "{self.id}". '
                        f'Use "#<state id>" of an existing state.',
                        path=where,
                    ) from None
        elif isinstance(guard, BuiltinGuard):
            for inner in guard.children():
                self._validate_state_in(inner, label, where)
        elif isinstance(guard, (str, dict)):
            name = guard if isinstance(guard, str) else guard.get("type")
            resolved = self.implementations.guards.get(name) if isinstance(name, str) else None
            if isinstance(resolved, BuiltinGuard):
                self._validate_state_in(resolved, label, where)

    def _validate_guard_name(self, name: str, label: str, where: str, seen: frozenset[str] = frozenset()) -> None:
        impl = self.implementations.guards
        if name not in impl:
            raise MachineConfigError(
                f'Guard "{name}" used in {label} has no implementation. Add it to setup(guards={{"{name}": ...}}).',
                path=where,
            )
        resolved = impl[name]
        if name not in seen and isinstance(resolved, (BuiltinGuard, str, dict)):
            for inner in guard_names(resolved):
                self._validate_guard_name(inner, label, where, seen | {name})

    def _validate_actions(self, actions: Any, label: str, where: str) -> None:
        impl = self.implementations
        for action in actions:
            target: Any = action
            if isinstance(action, (str, dict)):
                name = action if isinstance(action, str) else action.get("type")
                if not isinstance(name, str):
                    raise MachineConfigError(f"An action in {label} has no string \"type\": {action!r}.", path=where)
                if name not in impl.actions:
                    raise MachineConfigError(
                        f'Action "{name}" used in {label} has no implementation. '
                        f'Add it to setup(actions={{"{name}": ...}}).',
                        path=where,
                    )
                target = impl.actions[name]
            if isinstance(target, BuiltinAction) and not isinstance(target, EnqueueActions):
                for delay in target.referenced_delays():
                    if delay not in impl.delays:
                        raise MachineConfigError(
                            f'Delay "{delay}" used in {label} has no implementation. '
                            f'Add it to setup(delays={{"{delay}": <ms>}}).',
                            path=where,
                        )
                for src in target.referenced_actors():
                    if src not in impl.actors:
                        raise MachineConfigError(
                            f'Actor "{src}" spawned in {label} has no implementation. '
                            f'Add it to setup(actors={{"{src}": ...}}).',
                            path=where,
                        )

    def __repr__(self) -> str:
        return f"Machine(id={self.id!r})"
