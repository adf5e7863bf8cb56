"""`machine.definition`: a JSON view of the chart for the explorer and the structural version.

Format (every value JSON-safe; callables appear by registered name or `"inline:<qualname>"`):

    node = {
      "id": "agent.thinking", "key": "thinking",
      "type": "atomic" | "compound" | "parallel" | "final" | "history",
      "initial": {"target": ["#agent.idle"], "actions": [...]} | None,
      "history": "shallow" | "deep" | False,
      "states": {key: node, ...},                      # document order
      "on": {eventType: [transition, ...]},            # incl. onDone and invoke onDone/onError
      "always": [transition, ...], "after": [transition, ...],
      "entry": [action], "exit": [action],             # as configured (timers are implicit)
      "invoke": [{"id", "src", "input"?}], "tags": [...], "order": int,
      "output"?, "meta"?, "description"?,
    }
    transition = {
      "id": "#agent.idle:on:START:0",                  # stable; the explorer highlights by it
      "source": "agent.idle", "eventType": "START",
      "target": ["#agent.thinking"] | [],             # [] = targetless
      "guard": {"type": name, "params"?} | None,
      "actions": [{"type": name, "params"?}], "reenter": bool,
      "delay"?: int | name,                            # after-transitions only
    }
    action = {"type": name | "inline:<qualname>" | "xstate.raise" | ..., "params"?: {...}}

The root node also carries `"context"` (the static context, or the factory's name). Pure; the
structural hash is JCS canonical JSON + SHA-256, equal to the log's `state_hash` of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..canonical.jcs import state_hash
from ._util import UNDEFINED, callable_name, describe_value
from .guards import describe_guard

if TYPE_CHECKING:
    from .machine import Machine
    from .nodes import StateNode, Transition

__all__ = ["build_definition", "describe_action", "structural_hash"]


def describe_action(action: Any) -> dict[str, Any]:
    if isinstance(action, str):
        return {"type": action}
    if isinstance(action, dict):
        out: dict[str, Any] = {"type": action.get("type")}
        if "params" in action:
            out["params"] = describe_value(action["params"])
        return out
    describe = getattr(action, "describe", None)
    if describe is not None and not isinstance(action, type):
        result = describe()
        if isinstance(result, dict):
            return result
    return {"type": callable_name(action)}


def _describe_transition(t: Transition) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": t.id,
        "source": t.source.id,
        "eventType": t.event_type,
        "target": [f"#{n.id}" for n in t.target] if t.target else [],
        "guard": describe_guard(t.guard),
        "actions": [describe_action(a) for a in t.actions],
        "reenter": t.reenter,
    }
    if t.delay is not UNDEFINED:
        out["delay"] = t.delay
    if t.description is not None:
        out["description"] = t.description
    if t.meta is not None:
        out["meta"] = describe_value(t.meta)
    return out


def _describe_node(node: StateNode) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": node.id,
        "key": node.key,
        "type": node.type,
        "initial": (
            {"target": [f"#{n.id}" for n in node.initial.target or ()],
             "actions": [describe_action(a) for a in node.initial.actions]}
            if node.initial is not None else None
        ),
        "history": node.history,
        "states": {key: _describe_node(child) for key, child in node.states.items()},
        "on": {
            descriptor: [_describe_transition(t) for t in ts if t.delay is UNDEFINED]
            for descriptor, ts in node.transitions.items()
            if any(t.delay is UNDEFINED for t in ts)
        },
        "always": [_describe_transition(t) for t in node.always or []],
        "after": [_describe_transition(t) for t in node.after],
        "entry": [describe_action(a) for a in node.entry if not _is_timer(a)],
        "exit": [describe_action(a) for a in node.exit if not _is_timer(a)],
        "invoke": [
            {k: v for k, v in (("id", inv.id), ("src", inv.src), ("input", describe_value(inv.input))) if v is not None}
            if inv.input is not UNDEFINED else {"id": inv.id, "src": inv.src}
            for inv in node.invoke
        ],
        "tags": list(node.tags),
        "order": node.order,
    }
    if node.type == "history":
        out["target"] = [f"#{n.id}" for n in node.history_default or ()]
    if node.output is not UNDEFINED:
        out["output"] = describe_value(node.output)
    if node.meta is not None:
        out["meta"] = describe_value(node.meta)
    if node.description is not None:
        out["description"] = node.description
    return out


def _is_timer(action: Any) -> bool:
    # after-timers are added to entry/exit at build time; the definition shows them under "after"
    typ = getattr(action, "type", None)
    if typ == "xstate.raise":
        return isinstance(action.id, str) and action.id.startswith("xstate.after.")
    if typ == "xstate.cancel":
        return isinstance(action.send_id, str) and action.send_id.startswith("xstate.after.")
    return False


def build_definition(machine: Machine) -> dict[str, Any]:
    root = _describe_node(machine.root)
    context = machine.context_config
    root["context"] = callable_name(context) if callable(context) else describe_value(context)
    return root


def structural_hash(definition: dict[str, Any]) -> str:
    """`state_hash(definition)`: the same RFC 8785 + SHA-256 the log stamps on entries."""
    return state_hash(definition)
