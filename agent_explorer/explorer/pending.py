"""What is pending after any entry of a log: `after` timers armed, children in flight, effects owed; and the
frame fields that show it.

The effect ledger of the step path (`runtime.effects`) is folded once alongside the log and copied every K
entries, so the ledger after entry i costs one copy plus at most K steps, never a refold from 0 (the explorer
used to refold the journal for each index, and so drew owed effects only for the first 400 entries). Pure:
never executes an effect, never mutates an entry, never touches I/O.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..runtime.effects import AgentEffect, EffectLedger, fold_step, start_ledger
from .frames import FrameBuilder

__all__ = [
    "AFTER_PREFIX",
    "FRAME_BUDGET",
    "InFlight",
    "Pending",
    "PendingFrames",
    "PendingIndex",
    "Timer",
    "after_event_parts",
]

AFTER_PREFIX = "xstate.after."
DEFAULT_EVERY = 64
_RECENT = 64  # ledgers kept for scrubbing one step at a time


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
class InFlight:
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
    inflight: list[InFlight] = field(default_factory=list)

    def timer_events(self) -> set[str]:
        return {str(t.event.get("type")) for t in self.timers}

    def child(self, site: str) -> InFlight | None:
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
        detail = f"fires after {effect.delay} ms"  # the request id already names the event
    elif effect.request is not None and effect.request.src:
        detail = f"{effect.kind} {effect.request.src}"
    return {"kind": effect.kind, "site": effect.site, "requestId": effect.request_id, "detail": detail}


class PendingIndex:
    """The effect ledger after any entry of one log (a run or a branch), checkpointed every `every` entries.

    `entries` is read, never copied, and may grow (a branch appending): the fold follows on the next
    question. The fold advances only as far as asked (or `build(until)` drives it), so opening a long log
    costs nothing until its pending state is wanted. Thread-safe.

    Answers are exactly the step path's (`steps.replay` of the prefix): timers come from the delayed raises
    the transitions returned, so a log that starts from a restored snapshot (the version bridge) shows no
    timer armed before its own entries arm one: a persisted snapshot carries no scheduled events, and the
    step path does not re-arm them either. Children it holds are taken as in flight (at-least-once).
    """

    def __init__(
        self,
        machine: Any,
        entries: Sequence[Mapping[str, Any]],
        *,
        every: int = DEFAULT_EVERY,
        check_version: bool = True,
    ) -> None:
        self.machine = machine
        self.entries = entries
        self.every = max(1, int(every))
        self._lock = threading.RLock()
        snapshot, ledger, _ = start_ledger(machine, entries[0], check_version=check_version)
        # Where each timer / child request was first surfaced; a request id names one occurrence in a line.
        self._surfaced: dict[str, int] = {}
        self._note_surfaced(ledger, 0)
        self._frontier = 0
        self._frontier_state: tuple[Any, EffectLedger] = (snapshot, ledger)
        self._checkpoints: list[tuple[Any, EffectLedger]] = [(snapshot, ledger.checkpoint())]
        self._recent: OrderedDict[int, tuple[Any, EffectLedger]] = OrderedDict()
        self._recent[0] = (snapshot, ledger.checkpoint())

    @classmethod
    def fork(cls, parent: PendingIndex, entries: Sequence[Mapping[str, Any]], up_to: int) -> PendingIndex:
        """The index of a fork `[0, up_to)` of `parent`'s log: shares the checkpoints below the cut."""
        with parent._lock:
            parent.ledger_at(up_to - 1)
            child = object.__new__(cls)
            child.machine, child.entries, child.every = parent.machine, entries, parent.every
            child._lock = threading.RLock()
            last = up_to - 1
            child._surfaced = {k: v for k, v in parent._surfaced.items() if v <= last}
            child._checkpoints = parent._checkpoints[: last // parent.every + 1]
            snapshot, ledger = parent.ledger_at(last)
            child._frontier, child._frontier_state = last, (snapshot, ledger.checkpoint())
            child._recent = OrderedDict({last: (snapshot, ledger.checkpoint())})
            return child

    @property
    def built(self) -> int:
        return self._frontier + 1

    def _note_surfaced(self, ledger: EffectLedger, index: int) -> None:
        for effect in ledger._pending.values():
            if effect.request_id is not None:
                self._surfaced.setdefault(effect.request_id, index)

    def build(self, until: int | None = None) -> int:
        """Advance the checkpointed fold to `until` (default: the end of the log as it is now)."""
        with self._lock:
            target = len(self.entries) - 1 if until is None else min(until, len(self.entries) - 1)
            snapshot, ledger = self._frontier_state
            machine, entries, every = self.machine, self.entries, self.every
            for index in range(self._frontier + 1, target + 1):
                snapshot, _, surfaced = fold_step(machine, ledger, snapshot, entries[index])
                for effect in surfaced:
                    if effect.request_id is not None:
                        self._surfaced.setdefault(effect.request_id, index)
                if index % every == 0:
                    self._checkpoints.append((snapshot, ledger.checkpoint()))
            if target > self._frontier:
                self._frontier, self._frontier_state = target, (snapshot, ledger)
            return self._frontier

    def ledger_at(self, index: int) -> tuple[Any, EffectLedger]:
        """(snapshot, ledger) after entry `index`. The ledger is this index's own: read it, never fold it on."""
        with self._lock:
            if not 0 <= index < len(self.entries):
                raise IndexError(f"pending index {index} out of range for a log of {len(self.entries)} entries")
            found = self._recent.get(index)
            if found is not None:
                self._recent.move_to_end(index)
                return found
            if index >= self._frontier:
                self.build(index)
                snapshot, ledger = self._frontier_state
                found = (snapshot, ledger.checkpoint())
            else:
                previous = self._recent.get(index - 1)
                if previous is not None:
                    start, (snapshot, ledger) = index - 1, previous
                else:
                    start = index - index % self.every
                    snapshot, ledger = self._checkpoints[start // self.every]
                ledger = ledger.checkpoint()
                for position in range(start + 1, index + 1):
                    snapshot, _, _ = fold_step(self.machine, ledger, snapshot, self.entries[position])
                found = (snapshot, ledger)
            self._recent[index] = found
            if len(self._recent) > _RECENT:
                self._recent.popitem(last=False)
            return found

    def at(self, index: int) -> Pending:
        """Timers, children in flight and owed effects after entry `index` (one copy + at most K steps)."""
        snapshot, ledger = self.ledger_at(index)
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
                    armed_at=self._surfaced.get(effect.request_id or ""),
                )
            )
        inflight: list[InFlight] = []
        if getattr(snapshot, "status", "active") == "active":
            for site, child in (getattr(snapshot, "children", None) or {}).items():
                found = by_site.get(site)
                request_id = found.request_id if found is not None else None
                inflight.append(
                    InFlight(
                        id=str(site),
                        src=getattr(child, "src", None) or None,
                        kind=found.kind if found is not None else None,
                        request_id=request_id,
                        requested_at=self._surfaced.get(request_id or ""),
                    )
                )
        return Pending(index=index, owed=owed, timers=timers, inflight=inflight)


# How far past its fold the pending index may be pushed while building a frame (~0.1 ms per entry): beyond it the
# panel offers a button, or the explorer's background thread gets there first.
FRAME_BUDGET = 20_000


class PendingFrames(FrameBuilder):
    """The explorer's frame builder with owed effects from a line's checkpointed `PendingIndex` (cheap at any
    index, replacing the refold that limited them to the first 400 entries) plus `timers` and `inflight`."""

    def __init__(self, *args: Any, line: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.line = line

    def owed(self, index: int, *, force: bool = False) -> dict[str, Any]:
        pending_index: PendingIndex = self.line.pending_index
        if not force and index >= pending_index.built + FRAME_BUDGET:
            return {
                "effects": None,
                "timers": None,
                "inflight": None,
                "effectsNote": f"derived on request this far ahead (folded up to {pending_index.built:,} so far)",
            }
        try:
            found = pending_index.at(index).to_json()
        except Exception as error:  # noqa: BLE001 - informative panel; never hide the state for it
            detail = f"{type(error).__name__}: {error}"
            return {"effects": [{"kind": "error", "site": None, "requestId": None, "detail": detail}],
                    "timers": [], "inflight": [], "effectsNote": None}
        return {"effects": found["owed"], "timers": found["timers"], "inflight": found["inflight"], "effectsNote": None}

    def build(self, index: int) -> dict[str, Any]:
        frame = super().build(index)
        if "status" in frame:  # built (a frame that failed carries only its entry and an error message)
            frame.update(self.owed(frame["index"]))
        return frame
