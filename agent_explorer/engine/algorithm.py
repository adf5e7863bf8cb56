"""The SCXML-style transition algorithm XState v5 runs, with its function names in snake_case
(select_transitions, remove_conflicting_transitions, compute_exit_set, get_transition_domain,
microstep, exit_states, enter_states, compute_entry_set, macrostep, ...), so it can be read
side by side with XState's stateUtils.ts.

Pure: executes nothing. Actions are resolved into ExecutableAction records collected in a
Scope; snapshots are built anew, inputs are never mutated. No clocks, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..errors import AgentError
from ._util import UNDEFINED
from .actions import BuiltinAction, ExecutableAction, StopChild
from .guards import evaluate_guard
from .nodes import StateNode, Transition, get_proper_ancestors, is_descendant
from .snapshot import Configuration, Snapshot

if TYPE_CHECKING:
    from .machine import Machine

__all__ = [
    "Microstep",
    "Scope",
    "Work",
    "compute_entry_set",
    "compute_exit_set",
    "enter_states",
    "exit_states",
    "get_all_state_nodes",
    "get_effective_target_states",
    "get_initial_state_nodes",
    "get_state_nodes",
    "get_state_value",
    "get_transition_domain",
    "initial_step",
    "is_in_final_state",
    "macrostep",
    "microstep",
    "remove_conflicting_transitions",
    "resolve_actions",
    "select_eventless_transitions",
    "select_transitions",
]

XSTATE_INIT = "xstate.init"
XSTATE_STOP = "xstate.stop"


class Microstep:
    """What one microstep did, for the explorer: the event, transitions taken, states left/entered."""

    __slots__ = ("actions", "entered", "event", "exited", "snapshot", "transitions")

    def __init__(self, event: dict[str, Any], transitions: list[Transition]) -> None:
        self.event = event
        self.transitions = transitions
        self.exited: list[StateNode] = []
        self.entered: list[StateNode] = []
        self.snapshot: Snapshot | None = None
        self.actions: list[ExecutableAction] = []

    def to_dict(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "transitions": [t.id for t in self.transitions],
            "exited": [n.id for n in self.exited],
            "entered": [n.id for n in self.entered],
        }


class Scope:
    """One macrostep's surroundings: the machine, the internal event queue, the collected actions.

    `collect=False` builds no `ExecutableAction` (a fold that keeps only snapshots, e.g. a verifying one,
    would throw them away: ~0.7 us of a ~7.5 us step on benchmarks/fold.py); nothing in a snapshot
    depends on them.
    """

    __slots__ = ("actions", "collect", "deferred_actor_ids", "internal_queue", "machine", "trace")

    def __init__(self, machine: Machine, trace: bool = False, collect: bool = True) -> None:
        self.machine = machine
        self.internal_queue: list[dict[str, Any]] = []
        self.actions: list[ExecutableAction] = []
        self.collect = collect or trace
        self.deferred_actor_ids: tuple[str, ...] = ()
        self.trace: list[Microstep] | None = [] if trace else None


class Work:
    """The snapshot being built inside one microstep (XState clones per action; we mutate this)."""

    __slots__ = ("base", "changed", "children", "context", "error", "output", "status")

    def __init__(self, snapshot: Snapshot) -> None:
        self.base = snapshot
        self.context = snapshot._context
        self.children = snapshot._children
        self.status = snapshot._status
        self.output = snapshot._output
        self.error = snapshot._error
        self.changed = False

    def guard_view(self, scope: Scope) -> Snapshot:
        """The intermediate snapshot XState would hand a guard evaluated mid-microstep: the
        configuration and history are still the microstep's starting ones (XState swaps them last)."""
        base = self.base
        return Snapshot(
            scope.machine, base._config, self.context, status=self.status, children=self.children,
            history=base._history, output=self.output, error=self.error,
        )


# -- configurations ---------------------------------------------------------------------------


def get_initial_state_nodes(node: StateNode) -> list[StateNode]:
    """The node and its default descendants (compound: initial; parallel: every region), DFS order."""
    seen: dict[StateNode, None] = {}

    def visit(n: StateNode) -> None:
        if n in seen:
            return
        seen[n] = None
        if n.type == "compound":
            assert n.initial is not None and n.initial.target
            visit(n.initial.target[0])
        elif n.type == "parallel":
            for child in n.children:
                visit(child)

    visit(node)
    return list(seen)


def _initial_with_ancestors(node: StateNode) -> list[StateNode]:
    states = dict.fromkeys(get_initial_state_nodes(node))
    for s in list(states):
        for anc in get_proper_ancestors(s, node):
            states[anc] = None
    return list(states)


def get_all_state_nodes(nodes: Iterable[StateNode]) -> list[StateNode]:
    """Complete a partial configuration with default descendants and all ancestors, keeping
    XState's insertion order (it is observable: it orders parallel regions in the value)."""
    ordered: dict[StateNode, None] = dict.fromkeys(nodes)
    has_children = {n.parent for n in ordered if n.parent is not None}
    items = list(ordered)  # `ordered` in insertion order, indexable while it grows

    def add(new: Iterable[StateNode]) -> None:
        for n in new:
            if n not in ordered:
                ordered[n] = None
                items.append(n)

    i = 0
    while i < len(items):
        s = items[i]
        i += 1
        if s.type == "compound" and s not in has_children:
            add(_initial_with_ancestors(s))
        elif s.type == "parallel":
            for child in s.children:
                if child not in ordered:
                    add(_initial_with_ancestors(child))
    i = 0
    while i < len(items):
        add(items[i].ancestors)
        i += 1
    return items


def get_state_value(root: StateNode, nodes: Iterable[StateNode]) -> Any:
    """XState's getStateValue: the value built from the adjacency list of the completed set."""
    adj: dict[StateNode, list[StateNode]] = {}
    for s in get_all_state_nodes(nodes):
        if s not in adj:
            adj[s] = []
        if s.parent is not None:
            adj.setdefault(s.parent, []).append(s)
    return _value_from_adj(root, adj)


def _value_from_adj(base: StateNode, adj: dict[StateNode, list[StateNode]]) -> Any:
    children = adj.get(base)
    if children is None:
        return {}
    if base.type == "compound":
        if not children:
            return {}
        if children[0].is_atomic:
            return children[0].key
    return {c.key: _value_from_adj(c, adj) for c in children}


def get_state_nodes(node: StateNode, value: Any) -> list[StateNode]:
    """XState's getStateNodes: the nodes a state value names (with duplicates; callers dedupe)."""
    if isinstance(value, str):
        child = node.states.get(value)
        if child is None:
            raise ValueError(f"State '{value}' does not exist on '{node.id}'")
        return [node, child]
    out = [node.machine.root, node]
    subs = []
    for key in value:
        child = node.states.get(key)
        if child is None:
            raise ValueError(f"Child state '{key}' does not exist on '{node.id}'")
        out.append(child)
        subs.append((child, value[key]))
    for child, sub in subs:
        out.extend(get_state_nodes(child, sub))
    return out


def is_in_final_state(node_set: frozenset[StateNode] | dict[StateNode, None] | set[StateNode], node: StateNode) -> bool:
    if node.type == "compound":
        return any(s.type == "final" and s in node_set for s in node.children)
    if node.type == "parallel":
        return all(is_in_final_state(node_set, s) for s in node.children)
    return node.type == "final"


# -- selection --------------------------------------------------------------------------------


def _build_plan(node: StateNode, value: Any, event_type: str) -> Any:
    """A pruned tree mirroring XState's transitionNode walk for one event type."""
    if isinstance(value, str):
        child = node.states[value]
        cands = child.candidates(event_type)
        subs: tuple[Any, ...] = ((cands, ()),) if cands else ()
    else:
        built = []
        for key, sub in value.items():
            if sub == "":  # XState skips falsy sub-values
                continue
            p = _build_plan(node.states[key], sub, event_type)
            if p is not None:
                built.append(p)
        subs = tuple(built)
    own = node.candidates(event_type)
    if not own and not subs:
        return None
    return (own, subs)


def _run_plan(plan: Any, snapshot: Snapshot, event: dict[str, Any]) -> list[Transition]:
    own, subs = plan
    if subs:
        if len(subs) == 1:
            found = _run_plan(subs[0], snapshot, event)
        else:
            found = []
            for sub in subs:
                found.extend(_run_plan(sub, snapshot, event))
        if found:
            return found
    context = snapshot._context
    for t in own:
        guard = t.guard
        if guard is None or evaluate_guard(guard, context, event, snapshot):
            return [t]
    return []


def select_transitions(event: dict[str, Any], snapshot: Snapshot) -> list[Transition]:
    """Enabled transitions for an event: deepest states first, one per region, by document order."""
    config = snapshot._config
    event_type = event["type"]
    plans = config.plans
    if event_type in plans:
        plan = plans[event_type]
    else:
        plan = _build_plan(snapshot._machine.root, config.value, event_type)
        if len(plans) < 1024:
            plans[event_type] = plan
    if plan is None:
        return []
    return _run_plan(plan, snapshot, event)


def select_eventless_transitions(snapshot: Snapshot, event: dict[str, Any]) -> list[Transition]:
    """`always` transitions: for each atomic state, the first enabled one from it up to the root."""
    config = snapshot._config
    if not config.always_chains:
        return []
    enabled: dict[Transition, None] = {}
    context = snapshot._context
    for chain in config.always_chains:
        done = False
        for always in chain:
            for t in always:
                if t.guard is None or evaluate_guard(t.guard, context, event, snapshot):
                    enabled[t] = None
                    done = True
                    break
            if done:
                break
    if not enabled:
        return []
    return remove_conflicting_transitions(list(enabled), config.nodes, snapshot._history)


# -- exit/entry sets --------------------------------------------------------------------------


def get_effective_target_states(t: Any, history: dict[str, tuple[StateNode, ...]]) -> list[StateNode]:
    return _resolve_history_targets(t.target, history) if t.target else []


def _resolve_history_targets(
    nodes: Iterable[StateNode], history: dict[str, tuple[StateNode, ...]]
) -> list[StateNode]:
    """Targets with each history pseudo-state replaced by what it recorded, or else by its default
    (itself resolved, as a default may name another history state); first occurrence order kept."""
    out: dict[StateNode, None] = {}
    for node in nodes:
        if node.type != "history":
            out[node] = None
            continue
        recorded = history[node.id] if node.id in history else _resolve_history_targets(node.history_default, history)
        for n in recorded:
            out[n] = None
    return list(out)


def _find_lca(nodes: list[StateNode]) -> StateNode | None:
    head, tail = nodes[0], nodes[1:]
    for anc in head.ancestors:
        if all(anc in n.ancestor_set for n in tail):
            return anc
    return None


def get_transition_domain(t: Any, history: dict[str, tuple[StateNode, ...]]) -> StateNode | None:
    """The smallest compound/parallel state whose descendants the transition leaves and enters."""
    cacheable = isinstance(t, Transition) and not t.has_history_target
    if cacheable and t._domain is not UNDEFINED:
        return t._domain  # type: ignore[no-any-return]
    targets = get_effective_target_states(t, history)
    source = t.source
    if not t.reenter and all(n is source or source in n.ancestor_set for n in targets):
        domain: StateNode | None = source
    else:
        lca = _find_lca(targets + [source])
        if lca is not None:
            domain = lca
        elif t.reenter:
            domain = None
        else:
            domain = source.machine.root
    if cacheable:
        t._domain = domain
    return domain


def compute_exit_set(transitions: list[Any], node_set: Iterable[StateNode], history: dict[str, tuple[StateNode, ...]]) -> list[StateNode]:
    out: dict[StateNode, None] = {}
    nodes = list(node_set)
    for t in transitions:
        if t.target:
            domain = get_transition_domain(t, history)
            if t.reenter and domain is not None and t.source is domain:
                out[domain] = None
            for s in nodes:
                if domain is None or domain in s.ancestor_set:
                    out[s] = None
    return list(out)


def remove_conflicting_transitions(enabled: list[Transition], node_set: Iterable[StateNode], history: dict[str, tuple[StateNode, ...]]) -> list[Transition]:
    """Keep one of each pair whose exit sets intersect: the one from the deeper source wins."""
    if len(enabled) <= 1:
        return list(enabled)
    nodes = list(node_set)
    filtered: dict[Transition, None] = {}
    exit_sets: dict[Transition, set[StateNode]] = {}  # each computed once, not once per pair
    for t1 in enabled:
        preempted = False
        to_remove = []
        exit1 = exit_sets[t1] = set(compute_exit_set([t1], nodes, history))
        for t2 in filtered:
            if exit1 & exit_sets[t2]:
                if is_descendant(t1.source, t2.source):
                    to_remove.append(t2)
                else:
                    preempted = True
                    break
        if not preempted:
            for t3 in to_remove:
                del filtered[t3]
            filtered[t1] = None
    return list(filtered)


def compute_entry_set(
    transitions: list[Any],
    history: dict[str, tuple[StateNode, ...]],
    default_entry: set[StateNode],
    to_enter: dict[StateNode, None],
) -> None:
    for t in transitions:
        domain = get_transition_domain(t, history)
        for s in t.target or ():
            if s.type != "history" and (t.source is not s or t.source is not domain or t.reenter):
                to_enter[s] = None
                default_entry.add(s)
            add_descendant_states_to_enter(s, history, default_entry, to_enter)
        reentrancy = None if (t.source.parent is None and t.reenter) else domain
        for s in get_effective_target_states(t, history):
            ancestors = get_proper_ancestors(s, domain)
            if domain is not None and domain.type == "parallel":
                ancestors.append(domain)
            add_ancestor_states_to_enter(to_enter, history, default_entry, ancestors, reentrancy)


def _has_descendant_in(to_enter: dict[StateNode, None], node: StateNode) -> bool:
    return any(node in s.ancestor_set for s in to_enter)


def add_descendant_states_to_enter(node: StateNode, history: dict[str, tuple[StateNode, ...]], default_entry: set[StateNode], to_enter: dict[StateNode, None]) -> None:
    if node.type == "history":
        if node.id in history:
            targets = history[node.id]
            for s in targets:
                to_enter[s] = None
                add_descendant_states_to_enter(s, history, default_entry, to_enter)
            for s in targets:
                add_ancestor_states_to_enter(to_enter, history, default_entry, get_proper_ancestors(s, node.parent), None)
        else:
            targets = node.history_default
            for s in targets:
                to_enter[s] = None
                if node.history_default_is_parent_initial:
                    default_entry.add(node.parent)  # type: ignore[arg-type]
                add_descendant_states_to_enter(s, history, default_entry, to_enter)
            for s in targets:
                add_ancestor_states_to_enter(to_enter, history, default_entry, get_proper_ancestors(s, node.parent), None)
    elif node.type == "compound":
        assert node.initial is not None and node.initial.target  # validated at build time
        initial = node.initial.target[0]
        if initial.type != "history":
            to_enter[initial] = None
            default_entry.add(initial)
        add_descendant_states_to_enter(initial, history, default_entry, to_enter)
        add_ancestor_states_to_enter(to_enter, history, default_entry, get_proper_ancestors(initial, node), None)
    elif node.type == "parallel":
        for child in node.children:
            if not _has_descendant_in(to_enter, child):
                to_enter[child] = None
                default_entry.add(child)
                add_descendant_states_to_enter(child, history, default_entry, to_enter)


def add_ancestor_states_to_enter(
    to_enter: dict[StateNode, None],
    history: dict[str, tuple[StateNode, ...]],
    default_entry: set[StateNode],
    ancestors: list[StateNode],
    reentrancy_domain: StateNode | None,
) -> None:
    for anc in ancestors:
        if reentrancy_domain is None or reentrancy_domain in anc.ancestor_set:
            to_enter[anc] = None
        if anc.type == "parallel":
            for child in anc.children:
                if not _has_descendant_in(to_enter, child):
                    to_enter[child] = None
                    add_descendant_states_to_enter(child, history, default_entry, to_enter)


# -- actions ----------------------------------------------------------------------------------


def _custom_name(fn: Any) -> str:
    name = getattr(fn, "__name__", "")
    return "(anonymous)" if not name or name == "<lambda>" else name


def resolve_actions(scope: Scope, work: Work, event: dict[str, Any], actions: Iterable[Any]) -> None:
    """XState's resolveAndExecuteActionsWithContext with an executor that only records."""
    machine = scope.machine
    for action in actions:
        params: Any = None
        if isinstance(action, BuiltinAction):
            impl: Any = action
            name = action.type
        elif callable(action):
            if scope.collect:
                scope.actions.append(
                    ExecutableAction(_custom_name(action), None, {"context": work.context, "event": event}, action)
                )
            continue
        else:
            if isinstance(action, str):
                name = action
            else:
                name = action["type"]
                params = action.get("params")
                if callable(params):
                    params = params(work.context, event)
            impl = machine.implementations.actions.get(name)
        if not isinstance(impl, BuiltinAction):
            if scope.collect:
                scope.actions.append(ExecutableAction(name, params, {"context": work.context, "event": event}, impl))
            continue
        context = work.context  # what the action is resolved against (resolve may assign a new one)
        exec_params, sub_actions = impl.resolve(scope, work, context, event, params)
        if impl.has_execute and scope.collect:
            scope.actions.append(ExecutableAction(impl.type, exec_params, {"context": context, "event": event}, None))
        if sub_actions:
            resolve_actions(scope, work, event, sub_actions)


def _resolve_entry_actions(scope: Scope, work: Work, event: dict[str, Any], node: StateNode, actions: Iterable[Any]) -> None:
    """Resolve `node`'s entry actions with its invoke ids deferred (XState's deferredActorIds): a
    `send_to` among them may name an invoked actor whose spawn comes later in the same list."""
    if not node.invoke_ids:
        resolve_actions(scope, work, event, actions)
        return
    scope.deferred_actor_ids = node.invoke_ids
    try:
        resolve_actions(scope, work, event, actions)
    finally:
        scope.deferred_actor_ids = ()


def _resolve_output(mapper: Any, context: Any, event: dict[str, Any]) -> Any:
    if callable(mapper):
        return mapper(context, event, None)
    return mapper


def _done_state_event(node_id: str, output: Any = UNDEFINED) -> dict[str, Any]:
    if output is UNDEFINED:
        return {"type": f"xstate.done.state.{node_id}"}
    return {"type": f"xstate.done.state.{node_id}", "output": output}


# -- microstep / macrostep --------------------------------------------------------------------


def exit_states(
    scope: Scope,
    work: Work,
    event: dict[str, Any],
    transitions: list[Transition],
    mut: dict[StateNode, None],
    history: dict[str, tuple[StateNode, ...]],
    step: Microstep | None,
) -> dict[str, tuple[StateNode, ...]]:
    to_exit = compute_exit_set(transitions, mut, history)
    to_exit.sort(key=lambda n: n.order, reverse=True)
    updates = _record_history(to_exit, mut)
    for node in to_exit:
        resolve_actions(scope, work, event, node.exit_actions)
        del mut[node]
    if step is not None:
        step.exited.extend(to_exit)
    return {**history, **updates} if updates else history


def _record_history(to_exit: list[StateNode], active: dict[StateNode, None]) -> dict[str, tuple[StateNode, ...]]:
    """What each history node of the states being exited remembers (deep: the active atomic
    descendants; shallow: the active children), taken before any of them is removed."""
    updates: dict[str, tuple[StateNode, ...]] = {}
    for node in to_exit:
        for h in node.history_children:
            if h.history == "deep":
                updates[h.id] = tuple(s for s in active if s.is_atomic and node in s.ancestor_set)
            else:
                updates[h.id] = tuple(s for s in active if s.parent is node)
    return updates


def enter_states(
    scope: Scope,
    work: Work,
    event: dict[str, Any],
    transitions: list[Any],
    mut: dict[StateNode, None],
    history: dict[str, tuple[StateNode, ...]],
    is_initial: bool,
    step: Microstep | None,
) -> None:
    to_enter: dict[StateNode, None] = {}
    default_entry: set[StateNode] = set()
    compute_entry_set(transitions, history, default_entry, to_enter)
    machine = scope.machine
    if is_initial:
        default_entry.add(machine.root)
    completed: set[StateNode] = set()
    ordered = sorted(to_enter, key=lambda n: n.order)
    if step is not None:
        step.entered.extend(ordered)
    for node in ordered:
        mut[node] = None
        actions = node.entry_actions
        if node in default_entry and node.initial_actions:
            actions = actions + node.initial_actions
        if actions:
            _resolve_entry_actions(scope, work, event, node, actions)
        if node.type == "final":
            parent = node.parent
            marker = parent if (parent is not None and parent.type == "parallel") else (parent.parent if parent is not None else None)
            completion = marker or node
            if parent is not None and parent.type == "compound":
                out = _resolve_output(node.output, work.context, event) if node.output is not UNDEFINED else UNDEFINED
                scope.internal_queue.append(_done_state_event(parent.id, out))
            while marker is not None and marker.type == "parallel" and marker not in completed and is_in_final_state(mut, marker):
                completed.add(marker)
                scope.internal_queue.append(_done_state_event(marker.id))
                completion = marker
                marker = marker.parent
            if marker is not None:
                continue
            work.status = "done"
            work.output = _machine_output(work, event, machine.root, completion)
            work.changed = True


def _machine_output(work: Work, event: dict[str, Any], root: StateNode, completion: StateNode) -> Any:
    if root.output is UNDEFINED:
        return UNDEFINED
    inner = UNDEFINED
    if completion.output is not UNDEFINED and completion.parent is not None:
        inner = _resolve_output(completion.output, work.context, event)
    return _resolve_output(root.output, work.context, _done_state_event(completion.id, inner))


class StepPlan:
    """The action-independent part of a microstep, computed once per (configuration, transitions).

    Valid only where history cannot change the answer (no history targets, no compound whose
    initial state is a history node) and no final state is entered (done handling needs the
    context); other microsteps take the general path below.
    """

    __slots__ = ("enter", "exit", "filtered", "history_updates", "next_config")

    def __init__(self, filtered: list[Transition], exit: tuple[StateNode, ...],
                 history_updates: tuple[tuple[str, tuple[StateNode, ...]], ...],
                 enter: tuple[tuple[StateNode, tuple[Any, ...]], ...], next_config: Configuration) -> None:
        self.filtered = filtered
        self.exit = exit
        self.history_updates = history_updates
        self.enter = enter
        self.next_config = next_config


def _plan_step(machine: Machine, transitions: list[Transition], config: Configuration) -> StepPlan | None:
    history: dict[str, tuple[StateNode, ...]] = {}  # cannot matter: see StepPlan
    mut: dict[StateNode, None] = dict.fromkeys(config.nodes)
    filtered = remove_conflicting_transitions(transitions, mut, history) if len(transitions) > 1 else transitions
    to_exit = compute_exit_set(filtered, mut, history)
    to_exit.sort(key=lambda n: n.order, reverse=True)
    updates = _record_history(to_exit, mut)
    for node in to_exit:
        del mut[node]
    to_enter: dict[StateNode, None] = {}
    default_entry: set[StateNode] = set()
    compute_entry_set(filtered, history, default_entry, to_enter)
    ordered = sorted(to_enter, key=lambda n: n.order)
    if any(n.type == "final" for n in ordered):
        return None
    enter = tuple(
        (n, n.entry_actions + n.initial_actions if n in default_entry else n.entry_actions) for n in ordered
    )
    for n in ordered:
        mut[n] = None
    if not updates and len(mut) == len(config.node_set) and config.node_set.issuperset(mut):
        next_config = config
    else:
        next_config = machine.configuration(tuple(mut))
    return StepPlan(filtered, tuple(to_exit), tuple(updates.items()), enter, next_config)


def _cached_plan(machine: Machine, transitions: list[Transition], config: Configuration) -> StepPlan | None:
    if machine.history_sensitive_initial:
        return None
    for t in transitions:
        if t.has_history_target:
            return None
    key = tuple(transitions)
    steps = config.steps
    if key in steps:
        return steps[key]  # type: ignore[no-any-return]
    plan = _plan_step(machine, transitions, config)
    if len(steps) < 256:
        steps[key] = plan
    return plan


def _run_plan_step(
    scope: Scope, plan: StepPlan, snapshot: Snapshot, event: dict[str, Any], step: Microstep | None
) -> tuple[Work, Configuration, dict[str, tuple[StateNode, ...]]]:
    work = Work(snapshot)
    history = snapshot._history
    if plan.history_updates:
        history = dict(history)
        history.update(plan.history_updates)
    for node in plan.exit:
        if node.exit_actions:
            resolve_actions(scope, work, event, node.exit_actions)
    for t in plan.filtered:
        if t.actions:
            resolve_actions(scope, work, event, t.actions)
    for node, actions in plan.enter:
        if actions:
            _resolve_entry_actions(scope, work, event, node, actions)
    if step is not None:
        step.exited.extend(plan.exit)
        step.entered.extend(n for n, _ in plan.enter)
    return work, plan.next_config, history


def _run_full_step(
    scope: Scope, transitions: list[Any], snapshot: Snapshot, event: dict[str, Any], is_initial: bool,
    step: Microstep | None,
) -> tuple[Work, Configuration, dict[str, tuple[StateNode, ...]]]:
    work = Work(snapshot)
    old_config = snapshot._config
    mut: dict[StateNode, None] = dict.fromkeys(old_config.nodes)
    history = snapshot._history
    filtered = remove_conflicting_transitions(transitions, mut, history) if len(transitions) > 1 else transitions
    if not is_initial:
        history = exit_states(scope, work, event, filtered, mut, history, step)
    for t in filtered:
        if t.actions:
            resolve_actions(scope, work, event, t.actions)
    enter_states(scope, work, event, filtered, mut, history, is_initial, step)
    next_nodes = list(mut)
    if work.status == "done":
        next_nodes.sort(key=lambda n: n.order, reverse=True)
        resolve_actions(scope, work, event, [a for n in next_nodes for a in n.exit])
    if history is snapshot._history and len(mut) == len(old_config.node_set) and old_config.node_set.issuperset(mut):
        config = old_config
    else:
        config = scope.machine.configuration(tuple(next_nodes))
    return work, config, history


def microstep(
    scope: Scope,
    transitions: list[Any],
    snapshot: Snapshot,
    event: dict[str, Any],
    is_initial: bool = False,
) -> Snapshot:
    """Take a set of enabled transitions: exit set, transition actions, entry set (XState order)."""
    if not transitions:
        return snapshot
    step = Microstep(event, transitions) if scope.trace is not None else None
    first_action = len(scope.actions)
    plan = None
    if not is_initial and snapshot._status != "done":  # a done snapshot re-runs every exit (XState)
        plan = _cached_plan(scope.machine, transitions, snapshot._config)
    if plan is not None:
        work, config, history = _run_plan_step(scope, plan, snapshot, event, step)
    else:
        work, config, history = _run_full_step(scope, transitions, snapshot, event, is_initial, step)
    if not work.changed and config is snapshot._config and history is snapshot._history:
        result = snapshot
    else:
        result = Snapshot(
            scope.machine, config, work.context, status=work.status, children=work.children,
            history=history, output=work.output, error=work.error,
        )
    if step is not None and scope.trace is not None:
        step.snapshot = result
        step.actions = scope.actions[first_action:]
        scope.trace.append(step)
    return result


def _stop_children(scope: Scope, snapshot: Snapshot, event: dict[str, Any]) -> Work:
    work = Work(snapshot)
    resolve_actions(scope, work, event, [StopChild(child_id) for child_id in list(snapshot._children)])
    return work


def _trace_empty(scope: Scope, event: dict[str, Any], snapshot: Snapshot) -> None:
    if scope.trace is not None:
        step = Microstep(event, [])
        step.snapshot = snapshot  # XState records [snapshot, []] for these steps
        scope.trace.append(step)


def macrostep(scope: Scope, snapshot: Snapshot, event: dict[str, Any]) -> Snapshot:
    """Process one external event, then eventless transitions and raised events to a fixed point."""
    event_type = event["type"]
    if event_type == "*":
        raise AgentError("An event cannot have the wildcard type ('*')", code="invalid-event")
    machine = scope.machine
    if event_type == XSTATE_STOP:
        work = _stop_children(scope, snapshot, event)
        stopped = Snapshot(machine, snapshot._config, work.context, status="stopped", children=work.children,
                           history=snapshot._history, output=snapshot._output, error=snapshot._error)
        _trace_empty(scope, event, stopped)
        return stopped
    next_event = event
    if event_type != XSTATE_INIT:
        transitions = select_transitions(event, snapshot)
        if not transitions and event_type.startswith("xstate.error.actor"):
            work = _stop_children(scope, snapshot, event)
            errored = Snapshot(machine, snapshot._config, work.context, status="error", children=work.children,
                               history=snapshot._history, output=snapshot._output,
                               error=event.get("error", UNDEFINED))
            _trace_empty(scope, event, errored)
            return errored
        snapshot = microstep(scope, transitions, snapshot, event)
        if not transitions and scope.trace is not None:
            _trace_empty(scope, event, snapshot)  # XState records the first microstep even if empty
    select_eventless = True
    queue = scope.internal_queue
    max_iterations = machine.max_iterations
    iterations = 0
    while snapshot._status == "active":
        iterations += 1
        if iterations > max_iterations:
            raise AgentError(
                f"Infinite loop detected: machine '{machine.id}' has processed more than {max_iterations} "
                f"microsteps without reaching a stable state (a cycle of eventless transitions or raised events).",
                code="infinite-loop",
            )
        enabled = select_eventless_transitions(snapshot, next_event) if select_eventless else []
        previous = snapshot if enabled else None
        if not enabled:
            if not queue:
                break
            next_event = queue.pop(0)
            enabled = select_transitions(next_event, snapshot)
        snapshot_after = microstep(scope, enabled, snapshot, next_event)
        select_eventless = snapshot_after is not previous
        snapshot = snapshot_after
    if snapshot._status != "active":
        _stop_children(scope, snapshot, next_event)  # XState emits the stops but keeps the children
    return snapshot


def initial_step(scope: Scope, machine: Machine, input: Any) -> Snapshot:
    """XState's getInitialSnapshot: context from input, enter the initial configuration, settle.

    An exception here yields a snapshot with status "error" (XState catches it), not a raise.
    """
    init_event: dict[str, Any] = {"type": XSTATE_INIT}
    if input is not UNDEFINED and input is not None:
        init_event["input"] = input
    context_config = machine.context_config
    # a copy, so a caller editing snapshot.context cannot reach the machine's config
    base_context = dict(context_config) if (context_config is not None and not callable(context_config)) else {}
    snapshot = Snapshot(machine, machine.configuration((machine.root,)), base_context)
    try:
        if callable(context_config):
            made = context_config(None if input is UNDEFINED else input)
            snapshot = Snapshot(machine, snapshot._config, dict(made) if made is not None else {})
        root = machine.root
        initial = Transition("#initial", root, None, tuple(get_initial_state_nodes(root)), None, (), True)
        after_first = microstep(scope, [initial], snapshot, init_event, is_initial=True)
        return macrostep(scope, after_first, init_event)
    except Exception as error:  # noqa: BLE001 - XState turns any error of the initial transition into status "error"
        return Snapshot(machine, snapshot._config, snapshot._context, status="error",
                        children=snapshot._children, history=snapshot._history, error=error)
