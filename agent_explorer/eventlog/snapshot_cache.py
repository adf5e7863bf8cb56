"""Snapshot as cache (docs/semantics/replay.md "Snapshot as cache"): stamp, check and use cached snapshots of a log.

Job: `persist_snapshot` stamps a quiescent state with `agentMeta {machineId, version, logId,
logIndex}` (refusing mid-flight states); `resume_state` decides between the fast path (restore the
cached snapshot) and replaying the log, and raises `AgentSnapshotDivergedError` when a cache for
this log disagrees with the state the log replays to. The log stays the truth: this module never
writes a log, never executes an action, and never trusts a snapshot it cannot tie to the log.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..canonical.jcs import state_hash
from ..errors import AgentError, AgentSnapshotDivergedError
from .entries import recorded_state_hash
from .fold import fold, require_init_entry, strip_agent_meta
from .replay import ReplayResult, replay

__all__ = [
    "AGENT_META_KEY",
    "InFlight",
    "ResumeResult",
    "find_in_flight",
    "persist_snapshot",
    "resume_state",
]

AGENT_META_KEY = "agentMeta"


@dataclass(frozen=True)
class InFlight:
    """Something a snapshot cannot carry: a running child or a timer that has not fired."""

    kind: Literal["child", "timer", "delayed-event"]
    id: str
    detail: str


@dataclass(frozen=True)
class ResumeResult:
    """Where a resume starts: `.snapshot` (engine), `.persisted_snapshot`, and how it got there.

    `path` is "fast" (the cache was restored, no fold) or "replay"; `reason` says why the fast
    path was or was not taken; `replayed` is the ReplayResult when the log was folded.
    """

    snapshot: Any
    persisted_snapshot: dict[str, Any]
    path: Literal["fast", "replay"]
    reason: str
    replayed: ReplayResult | None = field(default=None, repr=False)


def _persisted(machine: Any, snapshot: Any) -> dict[str, Any]:
    if isinstance(snapshot, Mapping):
        return strip_agent_meta(snapshot)
    return machine.get_persisted_snapshot(snapshot)  # type: ignore[no-any-return]


def _tail_hash(entries: Sequence[Mapping[str, Any]]) -> str | None:
    return recorded_state_hash(entries[-1]) if entries else None


def _active_node_definitions(definition: Mapping[str, Any], value: Any) -> list[Mapping[str, Any]]:
    """The definitions of the state nodes a (persisted) state value makes active, root first."""
    found: list[Mapping[str, Any]] = [definition]
    pending: list[tuple[Mapping[str, Any], Any]] = [(definition, value)]
    while pending:
        node, sub_value = pending.pop()
        states = node.get("states") or {}
        if isinstance(sub_value, str):
            child = states.get(sub_value)
            if child is not None:
                found.append(child)
        elif isinstance(sub_value, Mapping):
            for key, deeper in sub_value.items():
                child = states.get(key)
                if child is not None:
                    found.append(child)
                    pending.append((child, deeper))
    return found


def find_in_flight(
    machine: Any, snapshot: Any, entries: Sequence[Mapping[str, Any]] | None = None
) -> list[InFlight]:
    """Everything in flight at `snapshot`: why it is not a quiescent point (empty list: it is).

    - a child (invoke or spawn) whose snapshot is still "active": its completion is not in the
      log yet, and a snapshot cannot carry the running request;
    - an active state with an `after` timer (the timer's firing would be a future entry);
    - with `entries`, a delayed `raise`/`send_to` issued by an earlier transition and neither
      delivered (journaled) nor cancelled since; found by folding the log (O(len)).
    """
    persisted = _persisted(machine, snapshot)
    found: list[InFlight] = []
    for child_id, child in (persisted.get("children") or {}).items():
        child_snapshot = child.get("snapshot") if isinstance(child, Mapping) else None
        status = child_snapshot.get("status") if isinstance(child_snapshot, Mapping) else None
        if status == "active":
            source = child.get("src") if isinstance(child, Mapping) else None
            found.append(InFlight("child", str(child_id), f"child {child_id!r} (src {source!r}) is still running"))
    if persisted.get("status") == "active":
        definition = getattr(machine, "definition", None) or {}
        for node in _active_node_definitions(definition, persisted.get("value")):
            for timer in node.get("after") or ():
                event_type = timer.get("eventType") if isinstance(timer, Mapping) else None
                found.append(
                    InFlight("timer", str(event_type), f"state {node.get('id')!r} waits on timer {event_type!r}")
                )
    if entries:
        timer_ids = {item.id for item in found if item.kind == "timer"}
        for send_id, event_type in _pending_delayed_events(machine, entries).items():
            if send_id not in timer_ids:
                found.append(
                    InFlight("delayed-event", send_id, f"delayed event {event_type!r} (id {send_id!r}) has not fired")
                )
    return found


def _pending_delayed_events(machine: Any, entries: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Delayed raise/send_to ids still pending after the log, by folding it and its actions."""
    pending: dict[str, str] = {}
    for step in fold(machine, entries, check_version=False):
        if step.actions is None:
            continue  # a usage entry: nothing delivered, nothing armed
        if step.index:
            event_type = step.entry["event"]["type"]
            for send_id in [key for key, armed in pending.items() if armed == event_type]:
                del pending[send_id]  # delivered: timer firings are journaled as entries
        _track(pending, step.actions)
    return pending


def _track(pending: dict[str, str], actions: Iterable[Any]) -> None:
    for action in actions:
        params = getattr(action, "params", None)
        if not isinstance(params, Mapping):
            continue
        kind = getattr(action, "type", None)
        if kind in ("xstate.raise", "xstate.sendTo") and params.get("delay") is not None:
            event = params.get("event") or {}
            event_type = str(event.get("type")) if isinstance(event, Mapping) else str(event)
            pending[str(params.get("id") or event_type)] = event_type
        elif kind == "xstate.cancel":
            pending.pop(str(params.get("sendId")), None)


def persist_snapshot(
    machine: Any,
    snapshot: Any,
    entries: Sequence[Mapping[str, Any]],
    log_id: str,
    *,
    check_quiescent: bool = True,
) -> dict[str, Any]:
    """The persisted snapshot of `snapshot` stamped with `agentMeta` for the log it caches.

    `snapshot` (engine Snapshot or persisted dict) must be the state at the end of `entries`:
    when the tail entry carries a stateHash it must match (else `AgentSnapshotDivergedError`).
    A state with anything in flight (see `find_in_flight`) is refused with `AgentError` code
    `not-quiescent`: the log can carry an in-flight request, a snapshot cannot.
    """
    if not entries:
        require_init_entry(None)
    persisted = _persisted(machine, snapshot)
    tail = _tail_hash(entries)
    actual = state_hash(persisted)
    if tail is not None and tail != actual:
        raise AgentSnapshotDivergedError(
            f"The snapshot to persist hashes to {actual}, but entry {len(entries) - 1} of log {log_id!r} "
            f"recorded {tail}: it is not the state at the end of this log. Persist the snapshot the "
            "log replays to (replay(machine, entries).persisted_snapshot).",
            log_id=log_id,
            log_index=len(entries),
            expected_hash=tail,
            actual_hash=actual,
        )
    if check_quiescent:
        in_flight = find_in_flight(machine, persisted, entries)
        if in_flight:
            details = "; ".join(item.detail for item in in_flight)
            raise AgentError(
                f"Refusing to snapshot log {log_id!r} at index {len(entries)}: the state is not "
                f"quiescent ({details}). A mid-flight snapshot cannot carry in-flight work; the log "
                "can. Snapshot at an idle point, after the completion is journaled.",
                code="not-quiescent",
                log_id=log_id,
                log_index=len(entries),
                in_flight=in_flight,
            )
    persisted[AGENT_META_KEY] = {
        "machineId": machine.id,
        "version": machine.version,
        "logId": log_id,
        "logIndex": len(entries),
    }
    return persisted


def resume_state(
    machine: Any,
    entries: Sequence[Mapping[str, Any]],
    snapshot: Mapping[str, Any] | None = None,
    log_id: str | None = None,
    *,
    verify: bool | Literal["strict"] = True,
) -> ResumeResult:
    """The state to resume `entries` from, via the cached `snapshot` when it provably fits.

    Fast path only when the snapshot's `agentMeta` names this machine (id and version), this log
    (`logId == log_id`), this length (`logIndex == len(entries)`), and its state hash equals the
    tail entry's `verification.stateHash` (length alone is not enough: a fork or a sibling thread
    can sit at the same index). Otherwise the log is replayed. A cache that names this log but
    disagrees with the state the log replays to at its `logIndex` raises
    `AgentSnapshotDivergedError` (code `snapshot-diverged`): drop it and resume from events alone.
    """
    entries = list(entries)
    meta = snapshot.get(AGENT_META_KEY) if isinstance(snapshot, Mapping) else None
    same_log = (
        isinstance(meta, Mapping)
        and log_id is not None
        and meta.get("logId") == log_id
        and meta.get("machineId") == machine.id
        and meta.get("version") == machine.version
    )
    assert snapshot is None or isinstance(snapshot, Mapping)
    reason: str
    if snapshot is None:
        reason = "no snapshot given"
    elif not isinstance(meta, Mapping):
        reason = "snapshot carries no agentMeta"
    elif not same_log:
        reason = "snapshot caches another log, machine or version"
    else:
        assert isinstance(meta, Mapping)
        tail = _tail_hash(entries)
        cached = strip_agent_meta(snapshot)
        if meta.get("logIndex") != len(entries):
            reason = f"snapshot is at index {meta.get('logIndex')}, the log has {len(entries)} entries"
        elif tail is None:
            reason = "the tail entry carries no stateHash to tie the snapshot to"
        elif state_hash(cached) != tail:
            reason = "snapshot hash differs from the tail entry's stateHash"
        else:
            restored = machine.restore_snapshot(cached)
            return ResumeResult(restored, cached, "fast", "agentMeta and tail stateHash match")
    replayed = replay(machine, entries, verify=verify)
    if snapshot is not None and same_log:
        _check_cache_against_log(machine, entries, snapshot, replayed, log_id, verified=bool(verify))
    return ResumeResult(replayed.snapshot, replayed.persisted_snapshot, "replay", reason, replayed)


def _check_cache_against_log(
    machine: Any,
    entries: list[Mapping[str, Any]],
    snapshot: Mapping[str, Any],
    replayed: ReplayResult,
    log_id: str | None,
    *,
    verified: bool,
) -> None:
    """Raise unless the cache hashes to the state the log replays to at the cache's logIndex.

    `verified`: `replayed` checked every recorded stateHash, so a recorded hash at logIndex - 1
    *is* the fold's hash there and the prefix need not be folded a second time.
    """
    meta = snapshot[AGENT_META_KEY]
    log_index = meta.get("logIndex")
    if not isinstance(log_index, int) or isinstance(log_index, bool) or log_index < 1 or log_index > len(entries):
        raise AgentSnapshotDivergedError(
            f"The snapshot cached for log {log_id!r} claims logIndex {log_index!r}, but the log has "
            f"{len(entries)} entries: the cache does not belong to this log's history. Drop the "
            "snapshot and resume from events alone.",
            log_id=log_id,
            log_index=log_index,
        )
    expected = recorded_state_hash(entries[log_index - 1]) if verified else None
    if expected is None:
        at_index = replayed if log_index == len(entries) else replay(machine, entries[:log_index], verify=False)
        expected = at_index.state_hash
    actual = state_hash(strip_agent_meta(snapshot))
    if expected != actual:
        raise AgentSnapshotDivergedError(
            f"The snapshot cached for log {log_id!r} at logIndex {log_index} hashes to {actual}, but "
            f"the log replays to {expected} there. The cache disagrees with the log (the log is the "
            "truth): drop the snapshot and resume from events alone.",
            log_id=log_id,
            log_index=log_index,
            expected_hash=expected,
            actual_hash=actual,
        )
