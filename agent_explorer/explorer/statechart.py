"""The statechart's shape read from `machine.definition`: its states, transitions, initial arrows and labels.

Pure walks over the JSON definition, kept apart from the DOT writer in graph.py so the analysis modules
(coverage, recording, frames) import without graphviz: a server reading a store's coverage draws nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = [
    "active_state_ids",
    "child_states",
    "collapsible_states",
    "initial_edge",
    "iter_nodes",
    "iter_transition_ids",
    "iter_transitions",
    "label_parts",
    "target_id",
    "transition_label",
]

_AFTER_EVENT = re.compile(r"^xstate\.after\.([^.]+)\.")


def iter_nodes(node: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every state node of a definition, document order (parents before children)."""
    yield node
    for child in child_states(node):
        yield from iter_nodes(child)


def iter_transitions(node: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every transition of a definition: `on` (per event type), `always`, `after`, invoke `onDone`/`onError`."""
    for state in iter_nodes(node):
        yield from _transitions_of(state)


def iter_transition_ids(node: Mapping[str, Any]) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """`(transition id, source state id, transition)` of every transition, the ids the graph's edges are keyed by:
    the definition's own id, else `<source>:<event type>:<n-th transition of its state>`."""
    for state in iter_nodes(node):
        source = str(state.get("id"))
        for n, transition in enumerate(_transitions_of(state)):
            yield str(transition.get("id") or f"{source}:{transition.get('eventType')}:{n}"), source, transition


def initial_edge(node: Mapping[str, Any], root_id: str) -> tuple[str, list[str]] | None:
    """`(edge key, [initial target ids])` of a state's initial arrow; None when it declares no initial.

    The root's key is `#initial` (the engine traces it as a transition); a nested one is `#<id>:initial`.
    """
    initial = node.get("initial")
    if isinstance(initial, Mapping):
        targets = [target_id(t) for t in initial.get("target") or []]
    elif isinstance(initial, str):
        targets = [f"{node.get('id')}.{initial}"]
    else:
        return None
    state_id = str(node.get("id"))
    return ("#initial" if state_id == root_id else f"#{state_id}:initial"), targets


def active_state_ids(definition: Mapping[str, Any], value: Any) -> list[str]:
    """State ids a state value makes active: the root, then every node the value names, recursively.

    Why from the value and not from the engine: the value is part of the persisted snapshot, the one thing
    every source of states (Timeline, store, a restored snapshot) is guaranteed to carry.
    """
    active: list[str] = [str(definition.get("id"))]
    _collect_active(definition, value, active)
    return active


def _collect_active(node: Mapping[str, Any], value: Any, out: list[str]) -> None:
    states = node.get("states") or {}
    if isinstance(value, str):
        child = states.get(value)
        if child is not None:
            out.append(str(child.get("id")))
            _collect_active(child, None, out)
    elif isinstance(value, Mapping):
        for key, sub in value.items():
            child = states.get(key)
            if child is not None:
                out.append(str(child.get("id")))
                _collect_active(child, sub, out)


def child_states(node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    states = node.get("states") or {}
    children = list(states.values())
    # `order` is document order in XState's definition; keep it when present so layout is stable.
    if all(isinstance(c.get("order"), int) for c in children):
        children.sort(key=lambda c: c["order"])
    return children


def _transitions_of(state: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for transitions in (state.get("on") or {}).values():
        yield from transitions or []
    yield from state.get("always") or []
    yield from state.get("after") or []
    for invoke in state.get("invoke") or []:
        for key in ("onDone", "onError", "onSnapshot"):
            yield from _as_list(invoke.get(key))


def _as_list(value: Any) -> list[Mapping[str, Any]]:
    if value is None:
        return []
    if isinstance(value, Mapping):
        return [value]
    return [v for v in value if isinstance(v, Mapping)]


def target_id(target: Any) -> str:
    text = str(target.get("id") if isinstance(target, Mapping) else target)
    return text.removeprefix("#")


def _guard_name(guard: Any) -> str | None:
    if guard is None:
        return None
    if isinstance(guard, str):
        return guard
    if isinstance(guard, Mapping):
        kind = str(guard.get("type", "guard"))
        params = guard.get("params")
        # Composite guards (and/or/not/stateIn) keep their structure readable without exploding the label.
        if kind in ("xstate.and", "xstate.or") and isinstance(params, Mapping):
            parts = [(_guard_name(g) or "?") for g in params.get("guards") or []]
            joiner = " && " if kind == "xstate.and" else " || "
            return "(" + joiner.join(parts) + ")"
        if kind == "xstate.not" and isinstance(params, Mapping):
            return "!" + (_guard_name(params.get("guard")) or "?")
        if kind == "xstate.stateIn" and isinstance(params, Mapping) and params.get("stateValue") is not None:
            # What a reader needs is which state the guard looks at, not the guard's type.
            return "in " + _state_in_text(params["stateValue"])
        return kind
    return str(guard)


def _state_in_text(value: Any) -> str:
    """A `state_in` guard's state: `#watch.main.displays.alarm1` reads as `#…displays.alarm1` (its last two keys),
    a state value object as its dotted leaves."""
    if isinstance(value, str):
        keys = value.removeprefix("#").split(".")
        return ("#" if value.startswith("#") else "") + ("…" if len(keys) > 2 else "") + ".".join(keys[-2:])
    if isinstance(value, Mapping):
        return " | ".join(f"{k}.{_state_in_text(v)}" if v else str(k) for k, v in value.items())
    return str(value)


def collapsible_states(definition: Mapping[str, Any]) -> list[str]:
    """The ids of the states that can be collapsed in the chart: every compound or parallel state but the root."""
    root = str(definition.get("id"))
    return [str(n.get("id")) for n in iter_nodes(definition) if child_states(n) and str(n.get("id")) != root]


def transition_label(transition: Mapping[str, Any]) -> str:
    """`EVENT [guard]` (always: `always`, delayed: `after <delay>`, invoke completion: `done: <id>`)."""
    event, guard = label_parts(transition)
    return f"{event} [{guard}]" if guard else event


def label_parts(transition: Mapping[str, Any]) -> tuple[str, str | None]:
    event = str(transition.get("eventType") or "")
    after = _AFTER_EVENT.match(event)
    if after:
        delay = after.group(1)
        event = f"after {delay}ms" if delay.isdigit() else f"after {delay}"
    elif event == "" or event == "xstate.always" or event == "always":
        event = "always"
    elif event.startswith("xstate.done.actor."):
        event = "done: " + event[len("xstate.done.actor.") :]
    elif event.startswith("xstate.error.actor."):
        event = "error: " + event[len("xstate.error.actor.") :]
    return event, _guard_name(transition.get("guard"))
