"""The event composer: at one index, the events a state accepts, templates to fill, and a dry run before sending.

Candidates come from the machine's definition (every `on` event type, plus the schemas' types), each checked with
`snapshot.can`; children in flight and pending timers add `xstate.done/error.actor.<id>` and `xstate.after...`
templates. A dry run validates a filled event exactly as `branch.append` will and folds it once to say where it
leads or that the state would ignore it. Pure: never appends, never executes an action, never touches I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..engine import transition_with_trace
from ..engine.values import value_text
from ..errors import AgentError
from ..runtime.effects import ERROR_PREFIX, to_done_event
from ..runtime.parse import event_schemas
from .branches import validate_event
from .pending import Pending, duration_text
from .protocol import ComposerCheck
from .values import taken_ids
from .wire import jsonable

__all__ = ["EventChoice", "FieldSpec", "choices_at", "composer_payload", "decisions_at", "dry_run"]

_PLACEHOLDERS: dict[str, Any] = {"string": "", "integer": 0, "number": 0, "boolean": False, "array": [], "object": {}}


@dataclass(frozen=True)
class FieldSpec:
    """One field of an event's schema, as the composer's form draws it."""

    name: str
    type: str  # a JSON-schema type, or "json" for anything else
    required: bool
    default: Any = None
    enum: list[Any] | None = None
    description: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "required": self.required,
            "default": jsonable(self.default),
            "enum": jsonable(self.enum),
            "description": self.description,
        }


@dataclass(frozen=True)
class EventChoice:
    """An event the composer offers: `kind` is "event" (a host event), "done" / "error" (a child in flight),
    or "timer" (a pending delayed event); `enabled` is `snapshot.can(template)`."""

    type: str
    kind: str
    enabled: bool
    template: dict[str, Any]
    fields: list[FieldSpec] = field(default_factory=list)
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "kind": self.kind,
            "enabled": self.enabled,
            "template": jsonable(self.template),
            "fields": [f.to_json() for f in self.fields],
            "note": self.note,
        }


def _definition_nodes(definition: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    stack = [definition]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(list((node.get("states") or {}).values())))
    return out


def _is_candidate(event_type: str) -> bool:
    return bool(event_type) and "*" not in event_type and not event_type.startswith(("xstate.", "@agent."))


def _schema_fields(schema: Any) -> list[FieldSpec]:
    """Fields of a pydantic model (or TypeAdapter) from its JSON schema; [] for a callable or no schema."""
    try:
        if hasattr(schema, "model_json_schema"):
            spec = schema.model_json_schema()
        elif hasattr(schema, "json_schema"):
            spec = schema.json_schema()
        else:
            return []
    except Exception:  # noqa: BLE001 - a schema without a JSON form still validates; the form is raw JSON
        return []
    required = set(spec.get("required") or ())
    fields = []
    for name, prop in (spec.get("properties") or {}).items():
        if name == "type":
            continue
        kind = prop.get("type") if isinstance(prop.get("type"), str) else "json"
        enum = prop.get("enum") or ([prop["const"]] if "const" in prop else None)
        fields.append(
            FieldSpec(name, kind, name in required, prop.get("default"), enum, prop.get("description"))
        )
    return fields


def _template(event_type: str, fields: list[FieldSpec]) -> dict[str, Any]:
    event: dict[str, Any] = {"type": event_type}
    for spec in fields:
        if spec.default is not None:
            event[spec.name] = spec.default
        elif spec.enum:
            event[spec.name] = spec.enum[0]
        elif spec.required:
            event[spec.name] = _PLACEHOLDERS.get(spec.type)
    return event


def _can(snapshot: Any, event: Mapping[str, Any]) -> bool:
    try:
        return bool(snapshot.can(dict(event)))
    except Exception:  # noqa: BLE001 - a guard that needs a field the template lacks: not enabled as is
        return False


def choices_at(machine: Any, snapshot: Any, pending: Pending | None) -> list[EventChoice]:
    """Every event the composer offers at this snapshot: what is in flight and armed first, then host events
    the state accepts (deepest state first), then the machine's other event types, marked as ignored here."""
    schemas = event_schemas(machine)
    nodes = _definition_nodes(machine.definition)
    by_id = {str(n.get("id")): n for n in nodes}
    active = [sid for sid in reversed(list(getattr(snapshot, "state_ids", ()) or ())) if sid in by_id]
    ordered: dict[str, None] = {}
    for sid in active:
        for event_type in by_id[sid].get("on") or {}:
            if _is_candidate(event_type):
                ordered.setdefault(event_type, None)
    for node in nodes:
        for event_type in node.get("on") or {}:
            if _is_candidate(event_type):
                ordered.setdefault(event_type, None)
    for event_type in schemas:
        if _is_candidate(event_type):
            ordered.setdefault(event_type, None)

    out: list[EventChoice] = []
    live = getattr(snapshot, "status", "active") == "active"
    if pending is not None and live:
        for child in pending.inflight:
            output: Any = {"text": ""} if child.kind == "text" else {}
            done = to_done_event(child.id, output)
            done_type, error_type = done["type"], f"{ERROR_PREFIX}{child.id}"
            error = {"type": error_type, "error": {"name": "Error", "message": "failed"}}
            what = f"{child.kind or 'child'} {child.request_id or child.id}"
            if child.kind != "decision":  # a decision completes with the event it chooses (listed below)
                out.append(EventChoice(done_type, "done", _can(snapshot, done), done,
                                       [FieldSpec("output", "json", True, output)], f"complete {what}"))
            handled = _can(snapshot, error)
            # XState: an actor error no state handles puts the whole machine in status "error".
            note = f"fail {what}" + ("" if handled else " (no onError handles it: the machine would stop with status error)")
            out.append(EventChoice(error_type, "error", handled, error,
                                   [FieldSpec("error", "json", True, error["error"])], note))
        for timer in pending.timers:
            event = dict(timer.event)
            delay = f"after {duration_text(timer.delay)}" if timer.delay is not None else "after a delay"
            armed = f", armed at {timer.armed_at}" if timer.armed_at is not None else ""
            out.append(EventChoice(str(event.get("type")), "timer", _can(snapshot, event), event, [],
                                   f"fire the timer ({delay}{armed})"))
    accepted: list[EventChoice] = []
    ignored: list[EventChoice] = []
    for event_type in ordered:
        fields = _schema_fields(schemas[event_type]) if event_type in schemas else []
        template = _template(event_type, fields)
        enabled = live and _can(snapshot, template)
        choice = EventChoice(event_type, "event", enabled, template, fields,
                             None if enabled else "ignored in this state (as filled by the template)")
        (accepted if enabled else ignored).append(choice)
    return out + accepted + ignored


def decisions_at(pending: Pending | None, live: bool = True) -> list[dict[str, Any]]:
    """The decisions in flight and the event types each may choose: a decision has no completion of its own (it
    completes with the event it picks, journaled as that event), so the composer offers those events for it."""
    if pending is None or not live:
        return []
    owed = {effect.site: effect for effect in pending.owed}
    out = []
    for child in pending.inflight:
        if child.kind != "decision":
            continue
        effect = owed.get(child.id)
        request = effect.request if effect is not None else None
        events = list(request.events) if request is not None else []
        out.append({"id": child.id, "requestId": child.request_id, "events": events})
    return out


def dry_run(machine: Any, snapshot: Any, pending: Pending | None, event: Any) -> ComposerCheck:
    """Validate `event` as `branch.append` will and fold it once (purely): where it leads, or why not.

    Returns `{ok, ignored, message, event}` (the event as it would be journaled, schema defaults filled) or
    `{ok: False, error, fields}` when validation refuses it.
    """
    try:
        parsed = validate_event(machine, snapshot, event, pending)
    except AgentError as error:
        return {"ok": False, "error": error.message, "fields": list(getattr(error, "fields", None) or [])}
    try:
        after, _, trace = transition_with_trace(machine, snapshot, parsed)
    except Exception as error:  # noqa: BLE001 - an action raising is what the user needs to see
        return {"ok": False, "error": f"the transition raises {type(error).__name__}: {error}", "fields": []}
    taken = taken_ids(trace)
    where = value_text(getattr(snapshot, "value", None))
    status = getattr(after, "status", None)
    if not taken and status != getattr(snapshot, "status", None):
        return {"ok": True, "ignored": False, "event": jsonable(parsed),
                "message": f"{parsed['type']}: no transition handles it; the machine's status becomes {status}"}
    if not taken:
        return {"ok": True, "ignored": True, "event": jsonable(parsed),
                "message": f"{parsed['type']} would be ignored in {where}: no enabled transition"}
    return {"ok": True, "ignored": False, "event": jsonable(parsed),
            "message": f"{parsed['type']}: {where} → {value_text(after.value)}"}


def composer_payload(machine: Any, snapshot: Any, pending: Pending | None, *, index: int, line: str,
                     last: bool) -> dict[str, Any]:
    """The `composer` traitlet: the choices at `index` of line `line`; `last` says whether sending appends
    to this line (its last index) or forks it after `index` first."""
    return {
        "index": index,
        "line": line,
        "appendsTo": line if last else None,
        "state": value_text(getattr(snapshot, "value", None)),
        "status": getattr(snapshot, "status", None),
        "choices": [c.to_json() for c in choices_at(machine, snapshot, pending)],
        "decisions": decisions_at(pending, getattr(snapshot, "status", "active") == "active"),
    }
