"""What is pending after any entry of a line: `after` timers armed, children in flight, effects owed.

A view of the line's one checkpointed fold: the Timeline carries the runtime's effect ledger along (its
`ledger=` is `EffectLedger.start_from`), so the pending state after entry i is read off the point at i, never
folded again. Pure: never executes an effect, never mutates an entry, never touches I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..eventlog.timeline import Point
from ..runtime.effects import AgentEffect, EffectLedger

__all__ = [
    "AFTER_PREFIX", "ChildInFlight", "Pending", "Timer", "after_event_parts", "duration_text", "effect_json", "pending_at",
]

AFTER_PREFIX = "xstate.after."


def after_event_parts(event_type: str) -> tuple[str, str] | None:
    """`xstate.after.<delay>.<stateId>` -> (delay, stateId); None for any other type.

    The delay is a number of milliseconds or a named delay; either way it has no dot, so the first dot
    after the prefix splits it from the state id (which has dots of its own).
    """
    if not event_type.startswith(AFTER_PREFIX):
        return None
    delay, _, state_id = event_type[len(AFTER_PREFIX) :].partition(".")
    return (delay, state_id) if delay and state_id else None


@dataclass(frozen=True)
class Timer:
    """A delayed event armed and neither fired nor cancelled: an `after` transition or a delayed raise."""

    id: str
    request_id: str | None
    event: dict[str, Any]
    delay: int | float | None
    state_id: str | None
    armed_at: int | None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "requestId": self.request_id,
            "event": self.event.get("type"),
            "delay": self.delay,
            "stateId": self.state_id,
            "armedAt": self.armed_at,
        }


@dataclass(frozen=True)
class ChildInFlight:
    """A child actor the snapshot holds (invoked or spawned) whose completion is not journaled yet."""

    id: str
    src: str | None
    kind: str | None
    request_id: str | None
    requested_at: int | None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "src": self.src,
            "kind": self.kind,
            "requestId": self.request_id,
            "requestedAt": self.requested_at,
        }


@dataclass
class Pending:
    """After entry `index`: timers armed, children in flight, and `owed` (what `steps.replay` of the prefix
    says is owed, in the order it was first surfaced)."""

    index: int
    owed: list[AgentEffect] = field(default_factory=list)
    timers: list[Timer] = field(default_factory=list)
    inflight: list[ChildInFlight] = field(default_factory=list)

    def timer_events(self) -> set[str]:
        return {str(t.event.get("type")) for t in self.timers}

    def child(self, site: str) -> ChildInFlight | None:
        return next((c for c in self.inflight if c.id == site), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "owed": [effect_json(e) for e in self.owed],
            "timers": [t.to_json() for t in self.timers],
            "inflight": [c.to_json() for c in self.inflight],
        }

    def to_pandas(self) -> Any:
        """One row per owed effect: kind, site, request id, and for timers the event and delay."""
        import pandas as pd

        return pd.DataFrame(
            [effect_json(e) | {"event": (e.event or {}).get("type"), "delay": e.delay} for e in self.owed],
            columns=["kind", "site", "requestId", "detail", "event", "delay"],
        )


def effect_json(effect: AgentEffect) -> dict[str, Any]:
    detail = None
    if effect.kind == "delay":
        detail = f"fires after {duration_text(effect.delay)}"  # the request id already names the event
    elif effect.request is not None and effect.request.src:
        detail = f"{effect.kind} {effect.request.src}"
    return {"kind": effect.kind, "site": effect.site, "requestId": effect.request_id, "detail": detail}


def duration_text(ms: Any) -> str:
    """A delay as a person reads it: `250 ms`, `1.5 s`, `4 min`, `4 h` (the exact ms stay in the tooltip data)."""
    if not isinstance(ms, (int, float)) or isinstance(ms, bool):
        return f"{ms} ms"
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if ms >= size:
            value = ms / size
            return f"{value:.3g} {unit}"
    return f"{ms:g} ms"


def pending_at(point: Point) -> Pending:
    """Timers, children in flight and owed effects after the entry of `point` (its own ledger)."""
    ledger = point.ledger
    if not isinstance(ledger, EffectLedger):
        raise TypeError("pending_at needs a point of a Timeline folded with the runtime's effect ledger")
    snapshot = point.snapshot
    owed = ledger.owed()
    by_site = {e.site: e for e in owed if e.kind != "delay"}
    timers: list[Timer] = []
    for effect in owed:
        if effect.kind != "delay":
            continue
        event = dict(effect.event or {})
        parts = after_event_parts(str(event.get("type", "")))
        timers.append(
            Timer(
                id=str(effect.site),
                request_id=effect.request_id,
                event=event,
                delay=effect.delay,
                state_id=parts[1] if parts else None,
                armed_at=ledger.surfaced_at(effect.site),
            )
        )
    inflight: list[ChildInFlight] = []
    if getattr(snapshot, "status", "active") == "active":
        children: Mapping[str, Any] = getattr(snapshot, "children", None) or {}
        for site, child in children.items():
            found = by_site.get(site)
            inflight.append(
                ChildInFlight(
                    id=str(site),
                    src=getattr(child, "src", None) or None,
                    kind=found.kind if found is not None else None,
                    request_id=found.request_id if found is not None else None,
                    requested_at=ledger.surfaced_at(site) if found is not None else None,
                )
            )
    return Pending(index=point.index, owed=owed, timers=timers, inflight=inflight)
