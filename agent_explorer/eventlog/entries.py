"""Log entries: build them (init_entry, create_replay_entry), check them, fork a log, read its lineage.

An entry is the wire-format dict of docs/semantics/entries.md "Fields" (camelCase keys, strict JSON).
Time and ids are injected (`now=`, `id=`) so tests and replays are deterministic. Never reads a
store or a file, never mutates an entry or a caller's value (events and metadata are copied in).
"""

from __future__ import annotations

import copy
import importlib
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final, NoReturn, Protocol

import orjson

from agent_explorer.canonical.jcs import state_hash
from agent_explorer.canonical.strict import assert_json_serializable
from agent_explorer.errors import (
    AgentError,
    AgentLogFormatError,
    NonSerializableAgentEventError,
)

__all__ = [
    "ENTRY_KEYS",
    "INIT_EVENT_TYPE",
    "SCHEMA_VERSION",
    "USAGE_EVENT_TYPE",
    "Clock",
    "LogMachine",
    "assert_agent_log_entry",
    "check_entry_shape",
    "create_replay_entry",
    "fork_event_log",
    "format_recorded_at",
    "get_log_execution_id",
    "init_entry",
    "new_entry_id",
    "new_execution_id",
    "normalize_error",
    "recorded_state_hash",
    "utc_now",
]

SCHEMA_VERSION: Final = 1
#: The reserved first entry: machine input or a persisted snapshot.
INIT_EVENT_TYPE: Final = "@agent.init"
#: Spend records: {"type": "@agent.usage", "requestId", "model", "usage": {...numbers}}.
USAGE_EVENT_TYPE: Final = "@agent.usage"

REQUIRED_KEYS: Final = frozenset(
    {"schemaVersion", "id", "index", "recordedAt", "machineId", "machineVersion", "event"}
)
ENTRY_KEYS: Final = REQUIRED_KEYS | {"causationId", "metadata", "verification"}

_RECORDED_AT: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|\+00:00)", re.ASCII
)
_STATE_HASH: Final = re.compile(r"[0-9a-f]{64}", re.ASCII)

#: A clock returns the current moment as an aware datetime (any zone; it is converted to UTC).
Clock = Callable[[], datetime]


class LogMachine(Protocol):
    """What the log needs of a machine: its identity and its persisted-snapshot serialiser."""

    @property
    def id(self) -> str: ...

    @property
    def version(self) -> str: ...

    def get_persisted_snapshot(self, snapshot: Any) -> Any: ...


def utc_now() -> datetime:
    """The default clock: wall time in UTC (acceptance metadata only, never machine time)."""
    return datetime.now(UTC)


def new_entry_id() -> str:
    """A fresh entry id: 128 random bits as 32 hex digits, unique within any thread in practice."""
    return uuid.uuid4().hex


def new_execution_id() -> str:
    """A fresh lineage id for an init entry's metadata.executionId."""
    return uuid.uuid4().hex


def format_recorded_at(moment: datetime) -> str:
    """ISO-8601 UTC with millisecond precision and a Z, exactly as JavaScript's toISOString()."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise AgentError(
            f"The entry clock returned a naive datetime ({moment!r}); recordedAt must be UTC. "
            "Return an aware datetime, e.g. datetime.now(UTC).",
            code="invalid-clock",
        )
    m = moment.astimezone(UTC)
    return (
        f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}"
        f".{m.microsecond // 1000:03d}Z"
    )


# ------------------------------------------------------------------------------------------------
# Building entries


def init_entry(
    machine: LogMachine,
    input: Any = None,
    snapshot: Mapping[str, Any] | None = None,
    metadata: Mapping[str, Any] | None = None,
    *,
    now: Clock | None = None,
    id: str | None = None,
) -> dict[str, Any]:
    """The index-0 entry of a log: `@agent.init` carrying machine input or a persisted snapshot.

    Its stateHash is the hash of the initial persisted snapshot, so replay can prove from the very
    first entry that it starts where the recorder started. metadata.executionId names the lineage
    and is generated unless the caller supplies one (a fork keeps its parent's).
    """
    if snapshot is not None and input is not None:
        raise AgentError(
            "init_entry takes machine input or a persisted snapshot, not both: the snapshot already "
            "holds the state the input would have built.",
            code="invalid-init-entry",
        )
    if not isinstance(metadata, Mapping | None):
        raise AgentError("metadata must be a dict of JSON values", code="invalid-entry-field")
    meta = _copy_json(dict(metadata) if metadata is not None else {}, "metadata")
    if "executionId" not in meta:
        meta["executionId"] = new_execution_id()
    elif not isinstance(meta["executionId"], str) or not meta["executionId"]:
        raise AgentError(
            f"metadata.executionId must be a non-empty string, got {meta['executionId']!r}",
            code="invalid-entry-field",
        )
    event: dict[str, Any] = {"type": INIT_EVENT_TYPE}
    if snapshot is not None:
        if not isinstance(snapshot, Mapping):
            raise AgentError(
                f"snapshot must be a persisted snapshot dict (machine.get_persisted_snapshot(...)), "
                f"got {type(snapshot).__name__}",
                code="invalid-init-entry",
            )
        event["snapshot"] = _copy_json(dict(snapshot), "event.snapshot")
        persisted: Any = event["snapshot"]
    else:
        if input is not None:
            event["input"] = _copy_json(input, "event.input")
        persisted = _initial_persisted_snapshot(machine, event.get("input"))
    return _entry(
        machine,
        event,
        0,
        state_hash=state_hash(persisted),
        causation_id=None,
        metadata=meta,
        now=now,
        id=id,
    )


def create_replay_entry(
    machine: LogMachine,
    event: Mapping[str, Any],
    index: int,
    snapshot_after: Any = None,
    causation_id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    *,
    now: Clock | None = None,
    id: str | None = None,
) -> dict[str, Any]:
    """An entry journaling one external input at `index`.

    With `snapshot_after` (the machine's snapshot once the event is applied) the entry carries
    verification.stateHash = state_hash(machine.get_persisted_snapshot(snapshot_after)); without it
    the entry carries no verification (replay then cannot check it, and "strict" rejects it).
    """
    if not isinstance(event, Mapping) or not isinstance(event.get("type"), str):
        raise AgentError(
            f"event must be a dict with a string 'type', got {_short(event)}",
            code="invalid-event",
        )
    if event["type"] == INIT_EVENT_TYPE:
        raise AgentError(
            f"{INIT_EVENT_TYPE} is reserved for the first entry; build it with init_entry().",
            code="reserved-event-type",
        )
    if type(index) is not int or index < 0:
        raise AgentError(f"index must be an int >= 0, got {index!r}", code="invalid-entry-field")
    if causation_id is not None and not isinstance(causation_id, str):
        raise AgentError(
            f"causation_id must be a string entry id, got {causation_id!r}",
            code="invalid-entry-field",
        )
    if metadata is not None and not isinstance(metadata, Mapping):
        raise AgentError("metadata must be a dict of JSON values", code="invalid-entry-field")
    copied_event = _copy_json(dict(event), "event")
    meta = _copy_json(dict(metadata), "metadata") if metadata is not None else None
    digest = None
    if snapshot_after is not None:
        digest = state_hash(machine.get_persisted_snapshot(snapshot_after))
    return _entry(
        machine,
        copied_event,
        index,
        state_hash=digest,
        causation_id=causation_id,
        metadata=meta,
        now=now,
        id=id,
    )


def _entry(
    machine: LogMachine,
    event: dict[str, Any],
    index: int,
    *,
    state_hash: str | None,
    causation_id: str | None,
    metadata: dict[str, Any] | None,
    now: Clock | None,
    id: str | None,
) -> dict[str, Any]:
    machine_id, machine_version = machine.id, machine.version
    if not isinstance(machine_id, str) or not isinstance(machine_version, str):
        raise AgentError(
            f"machine.id and machine.version must be strings, got {machine_id!r} and "
            f"{machine_version!r}",
            code="invalid-machine",
        )
    if id is not None and (not isinstance(id, str) or not id):
        raise AgentError(f"id must be a non-empty string, got {id!r}", code="invalid-entry-field")
    entry: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "id": id if id is not None else new_entry_id(),
        "index": index,
        "recordedAt": format_recorded_at((now or utc_now)()),
        "machineId": machine_id,
        "machineVersion": machine_version,
        "event": event,
    }
    if causation_id is not None:
        entry["causationId"] = causation_id
    if metadata is not None:
        entry["metadata"] = metadata
    if state_hash is not None:
        entry["verification"] = {"stateHash": state_hash}
    return entry


def _initial_persisted_snapshot(machine: LogMachine, input: Any) -> Any:
    # Imported lazily: the engine sits below the log, but importing it here at module load would
    # tie every log reader to the engine's import cost. Stand-in machines (tests, adapters) that
    # live outside the engine may carry their own initial_transition(input=...) when the engine
    # is not installed.
    try:
        engine = importlib.import_module("agent_explorer.engine")
    except ImportError:
        engine = None
    initial_transition: Any = getattr(engine, "initial_transition", None)
    if initial_transition is not None:
        snapshot, _actions = initial_transition(machine, input=input)
    else:
        own = getattr(machine, "initial_transition", None)
        if own is None:
            raise AgentError(
                "init_entry(input=...) needs agent_explorer.engine.initial_transition (or a machine "
                "with its own initial_transition) to hash the initial state; pass snapshot= instead.",
                code="engine-unavailable",
            )
        snapshot, _actions = own(input=input)
    return machine.get_persisted_snapshot(snapshot)


def _copy_json(value: Any, path: str) -> Any:
    """Validate as strict JSON and return an independent copy, so later caller mutations cannot
    rewrite a journaled entry."""
    assert_json_serializable(value, path)
    try:
        return orjson.loads(orjson.dumps(value))
    except orjson.JSONEncodeError:  # ints beyond 64 bits or nesting beyond orjson's limit
        return copy.deepcopy(value)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# ------------------------------------------------------------------------------------------------
# Checking entries


def assert_agent_log_entry(entry: Any, *, index: int | None = None) -> None:
    """Raise unless `entry` is a well-formed AgentLogEntry of schema version 1.

    Field problems raise AgentLogFormatError (with `.index`: the entry's own index when readable,
    else the expected `index`); values that are not strict JSON raise
    NonSerializableAgentEventError with the path (e.g. `event.items[3].when`). If `index` is
    given, the entry must sit at that index.
    """
    where = check_entry_shape(entry, index=index)
    try:
        assert_json_serializable(entry)
    except NonSerializableAgentEventError as error:
        raise NonSerializableAgentEventError(
            f"Log entry {where}: {error.message}", path=getattr(error, "path", "")
        ) from None


def check_entry_shape(entry: Any, *, index: int | None = None) -> int:
    """assert_agent_log_entry without the strict-JSON pass over the values; returns the index.

    For callers that already know the entry is strict JSON (e.g. it was just parsed from JSON
    text holding no integer beyond 2**53), so the walk over every value would prove nothing.
    """
    if not isinstance(entry, Mapping):
        _bad(index, f"is a {type(entry).__name__}, not an object")
    own_index = entry.get("index")
    if type(own_index) is int and own_index >= 0:
        where = own_index
    else:
        _bad(index, f"index must be an int >= 0, got {_short(own_index)}")
    if index is not None and own_index != index:
        _bad(own_index, f"has index {own_index}, expected {index}")
    keys = entry.keys()
    if not REQUIRED_KEYS <= keys:
        missing = ", ".join(sorted(REQUIRED_KEYS - keys))
        _bad(where, f"is missing {missing}")
    if not keys <= ENTRY_KEYS:
        unknown = ", ".join(sorted(str(k) for k in keys - ENTRY_KEYS))
        _bad(where, f"has unknown field(s) {unknown}; schema version 1 allows {_allowed()}")
    version = entry["schemaVersion"]
    if type(version) is not int or version != SCHEMA_VERSION:
        _bad(where, f"schemaVersion must be {SCHEMA_VERSION}, got {_short(version)}")
    entry_id = entry["id"]
    if type(entry_id) is not str or not entry_id:
        _bad(where, f"id must be a non-empty string, got {_short(entry_id)}")
    recorded_at = entry["recordedAt"]
    if type(recorded_at) is not str or not _valid_recorded_at(recorded_at):
        _bad(
            where,
            "recordedAt must be an ISO-8601 UTC timestamp like 2026-01-01T00:00:00.000Z, got "
            f"{_short(recorded_at)}",
        )
    for key in ("machineId", "machineVersion"):
        if type(entry[key]) is not str:
            _bad(where, f"{key} must be a string, got {_short(entry[key])}")
    event = entry["event"]
    if type(event) is not dict:
        _bad(where, f"event must be an object, got {_short(event)}")
    if type(event.get("type")) is not str:
        _bad(where, f"event.type must be a string, got {_short(event.get('type'))}")
    if "causationId" in entry and type(entry["causationId"]) is not str:
        _bad(where, f"causationId must be a string, got {_short(entry['causationId'])}")
    if "metadata" in entry and type(entry["metadata"]) is not dict:
        _bad(where, f"metadata must be an object, got {_short(entry['metadata'])}")
    if "verification" in entry:
        verification = entry["verification"]
        if type(verification) is not dict or verification.keys() != {"stateHash"}:
            _bad(where, f"verification must be {{'stateHash': <hex>}}, got {_short(verification)}")
        digest = verification["stateHash"]
        if type(digest) is not str or not _STATE_HASH.fullmatch(digest):
            _bad(
                where,
                f"verification.stateHash must be 64 lowercase hex digits, got {_short(digest)}",
            )
    return where


def _valid_recorded_at(text: str) -> bool:
    if not _RECORDED_AT.fullmatch(text):
        return False
    try:
        datetime.fromisoformat(text[:19])  # ranges: month 13, Feb 30, hour 24 are refused
    except ValueError:
        return False
    return True


def _allowed() -> str:
    return ", ".join(sorted(ENTRY_KEYS))


def _bad(index: int | None, problem: str) -> NoReturn:
    where = f"Log entry {index}" if index is not None else "Log entry"
    raise AgentLogFormatError(f"{where} {problem}.", index=index)


# ------------------------------------------------------------------------------------------------
# Whole-log helpers


def fork_event_log(entries: Sequence[Mapping[str, Any]], up_to_index: int) -> list[Any]:
    """The prefix [0, up_to_index) as a new, self-contained log (it keeps the init entry).

    The entries themselves are shared, not copied: entries are never mutated. A fork inherits the
    parent's execution id through the init entry it copies.
    """
    if isinstance(entries, str | bytes) or not isinstance(entries, Sequence):
        raise AgentError(
            f"entries must be a list of log entries, got {type(entries).__name__}",
            code="invalid-fork",
        )
    if type(up_to_index) is not int or not 1 <= up_to_index <= len(entries):
        raise AgentError(
            f"fork_event_log: up_to_index must be an int in [1, {len(entries)}] (exclusive end; "
            f"1 keeps only the init entry), got {up_to_index!r}",
            code="invalid-fork-index",
        )
    first = entries[0]
    if not isinstance(first, Mapping) or _event_type(first) != INIT_EVENT_TYPE:
        raise AgentError(
            f"fork_event_log: entry 0 is not the {INIT_EVENT_TYPE} entry, so no prefix of this log "
            "is self-contained.",
            code="missing-init-entry",
        )
    return list(entries[:up_to_index])


def get_log_execution_id(entries: Sequence[Mapping[str, Any]]) -> str | None:
    """The lineage id (init entry's metadata.executionId), or None when the log has none."""
    if not entries:
        return None
    first = entries[0]
    if not isinstance(first, Mapping) or _event_type(first) != INIT_EVENT_TYPE:
        return None
    metadata = first.get("metadata")
    if not isinstance(metadata, Mapping):
        return None
    execution_id = metadata.get("executionId")
    return execution_id if isinstance(execution_id, str) else None


def recorded_state_hash(entry: Mapping[str, Any]) -> str | None:
    """The entry's `verification.stateHash`, or None when it carries none."""
    verification = entry.get("verification")
    return verification.get("stateHash") if isinstance(verification, Mapping) else None


def _event_type(entry: Mapping[str, Any]) -> Any:
    event = entry.get("event")
    return event.get("type") if isinstance(event, Mapping) else None


def normalize_error(error: Any, *, _depth: int = 0) -> dict[str, Any]:
    """An error as the JSON payload xstate.error.actor entries carry: {name, message, cause?}.

    Exceptions give their class name and message, with `__cause__` (else a non-suppressed
    `__context__`) nested as cause; dicts keep their name/message; anything else becomes an
    "Error" whose message is its text. The result is always strict JSON.
    """
    if isinstance(error, BaseException):
        message = error.message if isinstance(error, AgentError) else str(error)
        result: dict[str, Any] = {"name": type(error).__name__, "message": message}
        cause = error.__cause__ or (None if error.__suppress_context__ else error.__context__)
        if cause is not None and _depth < 8:
            result["cause"] = normalize_error(cause, _depth=_depth + 1)
        return result
    if isinstance(error, Mapping):
        name = error.get("name")
        text = error.get("message")
        result = {
            "name": name if isinstance(name, str) and name else "Error",
            "message": text if isinstance(text, str) else _text(text),
        }
        if error.get("cause") is not None and _depth < 8:
            cause = error["cause"]
            try:
                result["cause"] = _copy_json(cause, "cause")
            except NonSerializableAgentEventError:
                result["cause"] = normalize_error(cause, _depth=_depth + 1)
        return result
    return {"name": "Error", "message": _text(error)}


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        return repr(value)
