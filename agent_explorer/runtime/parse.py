"""`parse_agent_event`: the wire boundary, turning untrusted JSON into an event for the machine.

Validates shape, refuses reserved types, and runs the event schema `setup_agent` registered
(pydantic) so defaults and validators apply. It never checks whether the current state handles the
event (that is the run's `ignored`), never touches a log, and raises nothing but
`AgentInvalidEventPayloadError` for bad payloads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..canonical.strict import assert_json_serializable
from ..errors import AgentError, AgentInvalidEventPayloadError

__all__ = ["RESERVED_PREFIXES", "event_schemas", "machine_of", "parse_agent_event"]

# `@agent.*` are the log's own records (init, usage). `xstate.*` are engine-internal events
# (actor completions, timers, init): accepting one off the wire would let a client forge a model
# output or fire a timer, so they are reserved at this boundary too. Hosts journal those directly.
RESERVED_PREFIXES: tuple[str, ...] = ("@agent.", "xstate.")


def machine_of(machine_or_snapshot: Any) -> Any:
    """The machine itself, or the machine a snapshot belongs to."""
    if hasattr(machine_or_snapshot, "extensions") and hasattr(machine_or_snapshot, "definition"):
        return machine_or_snapshot
    machine = getattr(machine_or_snapshot, "machine", None)
    if machine is None:
        raise AgentError(
            f"parse_agent_event needs a machine or a snapshot of one, got "
            f"{type(machine_or_snapshot).__name__}.",
            code="invalid-argument",
        )
    return machine


def event_schemas(machine: Any) -> Mapping[str, Any]:
    """The `{event type: schema}` map setup_agent hung on `machine.extensions["schemas"]`."""
    extensions = getattr(machine, "extensions", None) or {}
    schemas = extensions.get("schemas") if isinstance(extensions, Mapping) else None
    return schemas or {}


def _invalid(message: str, **context: Any) -> AgentInvalidEventPayloadError:
    return AgentInvalidEventPayloadError(message, **context)


def _field_path(loc: tuple[Any, ...]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "(event)"


def _run_schema(schema: Any, event_type: str, payload: dict[str, Any]) -> dict[str, Any]:
    from pydantic import BaseModel, TypeAdapter, ValidationError

    try:
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            parsed: Any = schema.model_validate(payload)
            data = parsed.model_dump(mode="json")
        elif isinstance(schema, TypeAdapter):
            data = schema.dump_python(schema.validate_python(payload), mode="json")
        elif callable(schema):
            data = schema(payload)
        else:
            raise AgentError(
                f"The schema registered for event {event_type!r} is a {type(schema).__name__}; "
                "register a pydantic model class, a TypeAdapter, or a callable returning the event dict.",
                code="invalid-schema",
            )
    except ValidationError as error:
        problems = [
            f"{_field_path(tuple(item['loc']))}: {item['msg']}" for item in error.errors(include_url=False)
        ]
        first = problems[0] if problems else str(error)
        raise _invalid(
            f"Event {event_type!r} failed its schema at {first}"
            + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
            + ".",
            event_type=event_type,
            fields=[_field_path(tuple(item["loc"])) for item in error.errors(include_url=False)],
        ) from None
    except (ValueError, TypeError) as error:  # a callable schema refusing the payload
        raise _invalid(f"Event {event_type!r} failed its schema: {error}", event_type=event_type) from None
    if not isinstance(data, Mapping):
        raise _invalid(
            f"The schema for event {event_type!r} returned {type(data).__name__}, not an event object.",
            event_type=event_type,
        )
    event = {key: value for key, value in data.items() if key != "type"}
    return {"type": event_type, **event}


def parse_agent_event(machine_or_snapshot: Any, payload: Any) -> dict[str, Any]:
    """Parse an untrusted JSON payload into an event, or raise `AgentInvalidEventPayloadError`.

    The payload must be a JSON object with a string `type` that is not reserved (`@agent.*`,
    `xstate.*`); a schema registered for that type then parses it (defaults filled, validators
    applied) and its message names the failing field. Types without a schema pass through as a
    copy. Whether the current state handles the event is deliberately not checked here.
    """
    machine = machine_of(machine_or_snapshot)
    if not isinstance(payload, Mapping):
        raise _invalid(f"An event must be a JSON object with a string 'type'; got {type(payload).__name__}.")
    event_type = payload.get("type")
    if not isinstance(event_type, str):
        raise _invalid(
            "An event must have a string 'type'; "
            + ("it has none." if "type" not in payload else f"got {type(event_type).__name__} {event_type!r:.60}.")
        )
    if not event_type:
        raise _invalid("An event's 'type' must not be empty.")
    for prefix in RESERVED_PREFIXES:
        if event_type.startswith(prefix):
            raise _invalid(
                f"Event type {event_type!r:.80} is reserved ({prefix}*): the log and the engine own it, "
                "so it cannot come from outside.",
                event_type=event_type,
            )
    try:
        assert_json_serializable(payload, "event")
    except AgentError as error:
        raise _invalid(
            f"Event {event_type!r:.80} is not strict JSON at {getattr(error, 'path', 'event')}: {error}",
            event_type=event_type,
            path=getattr(error, "path", None),
        ) from None
    except RecursionError:
        raise _invalid(f"Event {event_type!r:.80} is nested too deeply to be an event.") from None
    schema = event_schemas(machine).get(event_type)
    if schema is None:
        return dict(payload)
    event = _run_schema(schema, event_type, dict(payload))
    try:
        assert_json_serializable(event, "event")
    except AgentError as error:
        raise _invalid(
            f"The schema for {event_type!r} produced a value that is not strict JSON at "
            f"{getattr(error, 'path', 'event')}.",
            event_type=event_type,
        ) from None
    return event
