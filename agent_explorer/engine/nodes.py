"""StateNode and Transition: the machine config turned, once, into linked nodes with ids, document
order, ancestors, transitions by event descriptor, delayed and eventless transitions.

Built at create_machine time and never changed afterwards (per-node caches aside); a bad config
raises MachineConfigError naming the state path and the fix. No I/O; nothing here runs actions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import MachineConfigError
from ._util import UNDEFINED, js_keys, to_list
from .actions import cancel as _cancel
from .actions import raise_ as _raise
from .actions import spawn_child as _spawn
from .actions import stop_child as _stop

if TYPE_CHECKING:
    from .machine import Machine

__all__ = ["InvokeDef", "StateNode", "Transition", "get_proper_ancestors", "is_descendant", "matches_event_descriptor"]

STATE_DELIMITER = "."
WILDCARD = "*"


class Transition:
    """One transition: source node, event descriptor, targets (None = targetless), guard, actions."""

    __slots__ = (
        "_domain",
        "actions",
        "config",
        "delay",
        "description",
        "event_type",
        "guard",
        "has_history_target",
        "id",
        "meta",
        "reenter",
        "source",
        "target",
    )

    def __init__(
        self,
        id: str,
        source: StateNode,
        event_type: str | None,
        target: tuple[StateNode, ...] | None,
        guard: Any,
        actions: tuple[Any, ...],
        reenter: bool,
        delay: Any = UNDEFINED,
        config: Any = None,
    ) -> None:
        self.id = id
        self.source = source
        self.event_type = event_type
        self.target = target
        self.guard = guard
        self.actions = actions
        self.reenter = reenter
        self.delay = delay
        self.config = config
        self.has_history_target = target is not None and any(t.type == "history" for t in target)
        self._domain: Any = UNDEFINED
        self.description = config.get("description") if isinstance(config, dict) else None
        self.meta = config.get("meta") if isinstance(config, dict) else None

    def __repr__(self) -> str:
        return f"Transition({self.id!r})"


class InvokeDef:
    """An `invoke` entry: resolved id and source name, input, and its done/error/snapshot handlers."""

    __slots__ = ("config", "id", "input", "logic", "on_done", "on_error", "on_snapshot", "src", "system_id")

    def __init__(self, node: StateNode, index: int, config: Any) -> None:
        if isinstance(config, str) or not isinstance(config, dict):
            config = {"src": config}
        self.config = config
        src = config.get("src")
        if src is None:
            raise MachineConfigError(
                f'Invoke #{index} of state "#{node.id}" has no "src". Add {{"src": "<actor name>"}} '
                f"naming an actor given to setup(actors=...).",
                path=f"#{node.id}",
            )
        default_id = f"{index}.{node.id}"
        self.id = config.get("id") or default_id
        self.logic = None if isinstance(src, str) else src
        self.src = src if isinstance(src, str) else f"xstate.invoke.{default_id}"
        self.input = config.get("input", UNDEFINED)
        self.on_done = config.get("onDone")
        self.on_error = config.get("onError")
        self.on_snapshot = config.get("onSnapshot")
        self.system_id = config.get("systemId")


def is_descendant(child: StateNode, parent: StateNode | None) -> bool:
    """XState's isDescendant: is `parent` a proper ancestor of `child`? (None: everything is.)"""
    if parent is None:
        return True
    return parent in child.ancestor_set


def get_proper_ancestors(node: StateNode, to: StateNode | None) -> list[StateNode]:
    """Ancestors of `node` from its parent up to (excluding) `to`, or up to the root if `to` is None."""
    if to is node:
        return []
    out = []
    for anc in node.ancestors:
        if anc is to:
            break
        out.append(anc)
    return out


def matches_event_descriptor(event_type: str, descriptor: str) -> bool:
    """`*`, exact, or a trailing `prefix.*` wildcard matching whole dot-separated tokens."""
    if descriptor == event_type or descriptor == WILDCARD:
        return True
    if not descriptor.endswith(".*"):
        return False
    partial = descriptor.split(".")
    tokens = event_type.split(".")
    for i, token in enumerate(partial):
        if token == "*":
            return i == len(partial) - 1
        if i >= len(tokens) or token != tokens[i]:
            return False
    return True


class StateNode:
    """A state of the machine; built from config, linked to parent/children, then frozen."""

    __slots__ = (
        "_candidates",
        "after",
        "always",
        "ancestor_set",
        "ancestors",
        "children",
        "config",
        "depth",
        "description",
        "entry",
        "entry_actions",
        "exit",
        "exit_actions",
        "history",
        "history_children",
        "history_default",
        "history_default_is_parent_initial",
        "id",
        "initial",
        "initial_actions",
        "invoke",
        "invoke_ids",
        "is_atomic",
        "key",
        "machine",
        "meta",
        "order",
        "output",
        "parent",
        "path",
        "states",
        "tags",
        "transitions",
        "type",
    )

    def __init__(self, machine: Machine, config: dict[str, Any], key: str, parent: StateNode | None) -> None:
        if not isinstance(config, dict):
            where = f"#{machine.id}" if parent is None else f"#{parent.id}.{key}"
            raise MachineConfigError(
                f'State "{where}" must be a dict (a state config), got {type(config).__name__}.',
                path=where,
            )
        self.machine = machine
        self.config = config
        self.key = key
        self.parent = parent
        self.path: tuple[str, ...] = (parent.path + (key,)) if parent is not None else ()
        self.id: str = config.get("id") or STATE_DELIMITER.join((machine.id,) + self.path)
        states_config = config.get("states") or {}
        declared_type = config.get("type")
        if declared_type is not None and declared_type not in ("atomic", "compound", "parallel", "final", "history"):
            raise MachineConfigError(
                f'State "#{self.id}" has type {declared_type!r}; use one of atomic, compound, '
                f"parallel, final, history.",
                path=f"#{self.id}",
            )
        self.type: str = declared_type or (
            "compound" if states_config else ("history" if config.get("history") else "atomic")
        )
        # XState's id map exactly: `order` is the map's size before this node registers, and a
        # colliding id (explicit, or a default like "m.foo.bar" for a key "foo.bar" and the path
        # foo > bar) is not an error: the later node takes the id (keeping the earlier's slot in
        # the map) and both keep working by path. Document order uses `all_nodes`, never the map.
        self.order = len(machine.id_map)
        machine.id_map[self.id] = self
        machine.all_nodes.append(self)
        self.ancestors: tuple[StateNode, ...] = ((parent,) + parent.ancestors) if parent is not None else ()
        self.ancestor_set = frozenset(self.ancestors)
        self.depth = len(self.ancestors)
        self.states: dict[str, StateNode] = {}
        for child_key in js_keys(states_config):
            self.states[str(child_key)] = StateNode(machine, states_config[child_key], str(child_key), self)
        if self.type == "compound" and not config.get("initial"):
            first = next(iter(self.states), "...")
            raise MachineConfigError(
                f'No initial state specified for compound state node "#{self.id}". Try adding '
                f'{{"initial": "{first}"}} to the state config.',
                path=f"#{self.id}",
            )
        self.children = [s for s in self.states.values() if s.type != "history"]
        self.history_children = [s for s in self.states.values() if s.type == "history"]
        history = config.get("history")
        self.history = "shallow" if history is True else (history or False)
        if self.type == "history" and self.history not in ("shallow", "deep"):
            self.history = "shallow"
        self.entry: list[Any] = to_list(config.get("entry"))
        self.exit: list[Any] = to_list(config.get("exit"))
        self.meta = config.get("meta")
        self.description = config.get("description")
        self.output = config.get("output", UNDEFINED) if (self.type == "final" or parent is None) else UNDEFINED
        self.tags = tuple(to_list(config.get("tags")))
        self.invoke = [InvokeDef(self, i, c) for i, c in enumerate(to_list(config.get("invoke")))]
        self.is_atomic = self.type in ("atomic", "final")
        self.initial: Transition | None = None
        self.initial_actions: tuple[Any, ...] = ()
        self.transitions: dict[str, list[Transition]] = {}
        self.always: list[Transition] | None = None
        self.after: list[Transition] = []
        self.history_default: Any = None
        self.history_default_is_parent_initial = False
        self._candidates: dict[str, tuple[Transition, ...]] = {}
        self.entry_actions: tuple[Any, ...] = ()
        self.exit_actions: tuple[Any, ...] = ()
        self.invoke_ids: tuple[str, ...] = tuple(inv.id for inv in self.invoke)

    # -- second pass: needs every node registered (targets may be #ids) --------------------------

    def initialize(self) -> None:
        self.initial = self._format_initial()
        if self.initial is not None:
            self.initial_actions = self.initial.actions
        self.transitions = self._format_transitions()
        if "always" in self.config and self.config["always"] is not None:
            self.always = self._format_transitions_of("", self.config["always"], f"#{self.id}:always")
        # What entering/exiting runs, fixed once: entry (+ after timers), then one spawnChild per
        # invoke; exit (+ timer cancels), then one stopChild per invoke (XState's enterStates/exitStates).
        self.entry_actions = tuple(self.entry) + tuple(
            _spawn(inv.src, id=inv.id, input=None if inv.input is UNDEFINED else inv.input,
                   system_id=inv.system_id, sync_snapshot=inv.on_snapshot is not None)
            for inv in self.invoke
        )
        self.exit_actions = tuple(self.exit) + tuple(_stop(inv.id) for inv in self.invoke)
        for child in self.states.values():
            child.initialize()

    def initialize_history(self) -> None:
        """History defaults need every node's `initial`, so they run in a third pass."""
        if self.type == "history":
            parent = self.parent
            if parent is None:
                raise MachineConfigError(f'The root "#{self.id}" cannot be a history state.', path=f"#{self.id}")
            target = self.config.get("target")
            if target is None or target == "":
                if parent.type == "parallel":
                    self.history_default = (parent,)
                else:
                    if parent.initial is None:
                        raise MachineConfigError(
                            f'History state "#{self.id}" has no "target" and its parent "#{parent.id}" '
                            f'has no initial state. Add {{"target": "<sibling>"}} to the history state.',
                            path=f"#{self.id}",
                        )
                    self.history_default = parent.initial.target
                    self.history_default_is_parent_initial = True
            else:
                nodes = []
                for t in to_list(target):
                    try:
                        nodes.append(get_state_node_by_path(parent, str(t)))
                    except MachineConfigError as exc:
                        raise MachineConfigError(
                            f'History state "#{self.id}" has default target {t!r}, which is not a state '
                            f'under "#{parent.id}": {exc.message}',
                            path=f"#{self.id}",
                        ) from None
                self.history_default = tuple(nodes)
        for child in self.states.values():
            child.initialize_history()

    def _format_initial(self) -> Transition | None:
        initial = self.config.get("initial")
        # XState accepts `initial` (and child states) on a final state: it never enters them,
        # but a default entry of the final state runs the initial's actions, and an initial
        # naming no child throws when the state is entered. So: kept, checked here, never entered.
        if self.type != "compound" and not (self.type == "final" and initial):
            if initial:
                raise MachineConfigError(
                    f'State "#{self.id}" declares initial {initial!r} but is {self.type}, not compound. '
                    f"Remove \"initial\" or add child states.",
                    path=f"#{self.id}",
                )
            return None
        key = initial if isinstance(initial, str) else initial.get("target") if isinstance(initial, dict) else None
        target = self.states.get(key) if isinstance(key, str) else None
        if target is None:
            fix = (
                f"Use one of its child keys: {', '.join(self.states)}."
                if self.states
                else 'It has no child states: remove "initial".'
            )
            raise MachineConfigError(
                f'Initial state node "{key}" not found on parent state node #{self.id}. {fix}',
                path=f"#{self.id}",
            )
        actions = tuple(to_list(initial.get("actions"))) if isinstance(initial, dict) else ()
        return Transition(f"#{self.id}:initial", self, None, (target,), None, actions, False, config=initial)

    def _format_transitions(self) -> dict[str, list[Transition]]:
        out: dict[str, list[Transition]] = {}
        on = self.config.get("on") or {}
        for descriptor in js_keys(on):
            if descriptor == "":
                raise MachineConfigError(
                    f'State "#{self.id}" has a transition on the empty event "". Use "always" for '
                    f"eventless transitions.",
                    path=f"#{self.id}",
                )
            d = str(descriptor)
            out[d] = self._format_transitions_of(d, on[descriptor], f"#{self.id}:on:{d}")
        if self.config.get("onDone") is not None:
            d = f"xstate.done.state.{self.id}"
            out[d] = self._format_transitions_of(d, self.config["onDone"], f"#{self.id}:on:{d}")
        for inv in self.invoke:
            for kind, handler in (("done", inv.on_done), ("error", inv.on_error)):
                if handler is not None:
                    d = f"xstate.{kind}.actor.{inv.id}"
                    out[d] = self._format_transitions_of(d, handler, f"#{self.id}:on:{d}")
            if inv.on_snapshot is not None:
                d = f"xstate.snapshot.{inv.id}"
                out[d] = self._format_transitions_of(d, inv.on_snapshot, f"#{self.id}:on:{d}")
        self.after = self._format_after()
        for t in self.after:
            out.setdefault(t.event_type or "", []).append(t)
        return out

    def _format_after(self) -> list[Transition]:
        after = self.config.get("after")
        if not after:
            return []
        result = []
        for key in js_keys(after):
            if isinstance(key, (int, float)) and not isinstance(key, bool):
                delay: Any = key
            else:
                try:
                    delay = int(key)
                except ValueError:
                    try:
                        delay = float(key)
                    except ValueError:
                        delay = key
            delay_text = str(delay)
            event_type = f"xstate.after.{delay_text}.{self.id}"
            # XState appends the timer to entry and its cancellation to exit at build time.
            self.entry.append(_raise({"type": event_type}, delay=delay, id=event_type))
            self.exit.append(_cancel(event_type))
            result += self._format_transitions_of(event_type, after[key], f"#{self.id}:after:{delay_text}", delay)
        return result

    def _format_transitions_of(self, descriptor: str, config: Any, tid_prefix: str, delay: Any = UNDEFINED) -> list[Transition]:
        """One Transition per item of a transition config (a target, a dict, or a list of them),
        with ids `<tid_prefix>:<index>`."""
        return [
            self._format_transition(descriptor, t, f"{tid_prefix}:{i}", delay)
            for i, t in enumerate(_transition_configs(config))
        ]

    def _format_transition(self, descriptor: str, config: dict[str, Any], tid: str, delay: Any = UNDEFINED) -> Transition:
        if "cond" in config:
            raise MachineConfigError(
                f'State "#{self.id}" has declared `cond` for one of its transitions. This property has '
                f"been renamed to `guard`. Please update your code.",
                path=f"#{self.id}",
            )
        raw_target = config.get("target")
        targets = None if raw_target is None or raw_target == "" else to_list(raw_target)
        resolved = None if targets is None else tuple(self._resolve_target(t, descriptor) for t in targets)
        return Transition(
            tid,
            self,
            descriptor,
            resolved,
            config.get("guard"),
            tuple(to_list(config.get("actions"))),
            bool(config.get("reenter", False)),
            delay,
            config,
        )

    def _resolve_target(self, target: Any, descriptor: str) -> StateNode:
        if isinstance(target, StateNode):
            return target
        on = f' (on "{descriptor}")' if descriptor else " (always)"
        if not isinstance(target, str):
            raise MachineConfigError(
                f'Transition target {target!r} of state "#{self.id}"{on} must be a string.', path=f"#{self.id}"
            )
        try:
            return resolve_target(self, target)
        except MachineConfigError as exc:
            raise MachineConfigError(
                f'Unknown transition target "{target}" in state "#{self.id}"{on}: {exc.message} '
                f'Fix: use a sibling key, ".child", or "#id" of an existing state.',
                path=f"#{self.id}",
            ) from None

    # -- runtime helpers ------------------------------------------------------------------------

    def candidates(self, event_type: str) -> tuple[Transition, ...]:
        """XState's getCandidates, cached per event type: exact match first, then wildcards by length."""
        cached = self._candidates.get(event_type)
        if cached is not None:
            return cached
        transitions = self.transitions
        exact = transitions.get(event_type)
        wild_keys = [
            d for d in transitions if d != event_type and matches_event_descriptor(event_type, d)
        ]
        wild_keys.sort(key=len, reverse=True)
        result = tuple(exact or ()) + tuple(t for d in wild_keys for t in transitions[d])
        if len(self._candidates) < 4096:
            self._candidates[event_type] = result
        return result

    def __repr__(self) -> str:
        return f"StateNode(#{self.id})"


def _transition_configs(config: Any) -> list[dict[str, Any]]:
    out = []
    for item in to_list(config) if isinstance(config, (list, tuple)) else [config]:
        if item is None or isinstance(item, str):
            out.append({"target": item})
        elif isinstance(item, dict):
            out.append(item)
        else:
            raise MachineConfigError(f"A transition must be a target string or a dict, got {item!r}.")
    return out


def resolve_target(node: StateNode, target: str) -> StateNode:
    """XState's resolveTarget for one string target of a transition of `node`.

    `#...` is an id then a child path (Machine.get_state_node_by_id); `.a.b` is a path under
    `node` itself; anything else is a path under the parent (a sibling first). The root has no
    siblings, so a bare target there is an error.
    """
    if target.startswith("#"):
        return node.machine.get_state_node_by_id(target)
    if target.startswith(STATE_DELIMITER):
        if node.parent is None:
            return get_state_node_by_path(node, target[1:])
        return get_state_node_by_path(node.parent, node.key + target)
    if node.parent is None:
        raise MachineConfigError(
            f'Invalid target: "{target}" is not a valid target from the root node. Did you mean ".{target}"?',
            path=f"#{node.id}",
        )
    return get_state_node_by_path(node.parent, target)


def get_state_node_by_path(node: StateNode, path: str | list[str]) -> StateNode:
    """XState's getStateNodeByPath: a `#`-string is tried as an id (then path) first; otherwise
    walk the unescaped-dot-separated keys from `node`, stopping at an empty key. A key that
    itself starts with `#` jumps to that id (as XState's getStateNode does)."""
    if isinstance(path, str) and path.startswith("#"):
        try:
            return node.machine.get_state_node_by_id(path)
        except MachineConfigError:
            pass  # XState then walks the path itself, which fails on "#..." the same way
    current = node
    for key in to_state_path(path) if isinstance(path, str) else path:
        if not key:
            break
        current = child_state_node(current, key)
    return current


def child_state_node(node: StateNode, key: str) -> StateNode:
    """XState's getStateNode: the child `key` of `node`, or the node with id `key` if it starts with `#`."""
    if key.startswith("#"):
        return node.machine.get_state_node_by_id(key)
    child = node.states.get(key)
    if child is None:
        raise MachineConfigError(f"Child state '{key}' does not exist on '{node.id}'.", path=f"#{node.id}")
    return child


def to_state_path(state_id: str) -> list[str]:
    """XState's toStatePath: split on dots; a backslash takes the next character literally (so an
    escaped backslash before a dot is a backslash, then a split). A trailing lone backslash takes JavaScript's
    `undefined` and yields the text "undefined", exactly as XState does."""
    if "\\" not in state_id:
        return state_id.split(".")
    result, segment, i, n = [], "", 0, len(state_id)
    while i < n:
        ch = state_id[i]
        if ch == "\\":
            segment += state_id[i + 1] if i + 1 < n else "undefined"
            i += 2
            continue
        if ch == ".":
            result.append(segment)
            segment = ""
        else:
            segment += ch
        i += 1
    result.append(segment)
    return result
