"""What the recording did, beside what today's machine does: the other side of a divergence.

At an index where the recorded stateHash differs from the replay, the view shows both sides. With the machine
that recorded the log (`compare_with`), the recording's side is that machine's own fold of the log (a second line,
folded lazily, only as far as asked). Without it, the recording's states are inferred from what it journaled next:
a completion `xstate.done.actor.<id>` means the state invoking `<id>` was active; a host event after which the
recorded hash changed means one of the states handling that event was. Pure: reads the log and the definitions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..engine.values import value_text
from ..eventlog.entries import recorded_state_hash
from ..eventlog.timeline import Timeline
from ..plural import plural
from ..runtime.effects import completion_site
from .protocol import RecordingSideView
from .statechart import active_state_ids, iter_nodes

__all__ = ["EVIDENCE_HORIZON", "RecordingSide", "RecordingView"]

EVIDENCE_HORIZON = 50  # entries looked ahead for what the recording journaled next


@dataclass(frozen=True)
class RecordingSide:
    """The recording's side at one index: its states (`active`: ids on this chart), how they are known
    (`source`: "recorder" — the recording machine's own fold — or "inferred"), and why, in words."""

    index: int
    source: str
    active: list[str]
    value_text: str | None
    reason: str
    candidates: bool = False  # inferred from a host event: one of `active` (the states handling it), not all
    reproduces: bool | None = None  # the recorder's hash equals the recorded one here (None: no hash recorded)

    def to_json(self) -> RecordingSideView:
        return {
            "index": self.index,
            "source": self.source,
            "active": self.active,
            "valueText": self.value_text,
            "reason": self.reason,
            "candidates": self.candidates,
            "reproduces": self.reproduces,
        }


class RecordingView:
    """The recording's side of any index of a recorded line (see the module docstring)."""

    def __init__(self, machine: Any, entries: Sequence[Mapping[str, Any]], recorder: Any = None) -> None:
        self.machine = machine
        self.entries = entries
        self.recorder = recorder
        self._definition = machine.definition
        self._timeline: Timeline | None = None
        invoked: dict[str, list[str]] = {}
        handles: dict[str, list[str]] = {}
        parents: dict[str, str | None] = {}
        labels: dict[str, str] = {}
        for node in iter_nodes(self._definition):
            state_id = str(node.get("id"))
            labels[state_id] = str(node.get("key") or state_id)
            for child in (node.get("states") or {}).values():
                parents[str(child.get("id"))] = state_id
            parents.setdefault(state_id, None)
            for invoke in node.get("invoke") or ():
                if isinstance(invoke, Mapping) and invoke.get("id") is not None:
                    invoked.setdefault(str(invoke["id"]), []).append(state_id)
            for event_type in node.get("on") or {}:
                handles.setdefault(str(event_type), []).append(state_id)
        self._invoked = invoked
        self._handles = handles
        self._parents = parents
        self._labels = labels

    def at(self, index: int) -> RecordingSide:
        if self.recorder is not None:
            return self._from_recorder(index)
        return self._inferred(index)

    def _from_recorder(self, index: int) -> RecordingSide:
        if self._timeline is None:
            self._timeline = Timeline(self.recorder, self.entries, check_version=False, lazy=True, errors="record")
        point = self._timeline.point_at(index, traced=False)
        persisted = self.recorder.get_persisted_snapshot(point.snapshot)
        value = persisted.get("value")
        recorded = recorded_state_hash(self.entries[index])
        reproduces = None if recorded is None else self._timeline.hash_at(index) == recorded
        name = f"{getattr(self.recorder, 'id', 'machine')} v{getattr(self.recorder, 'version', '?')}"
        agrees = (
            "its fold reproduces the recorded hash here" if reproduces
            else "its fold does NOT reproduce the recorded hash here either" if reproduces is False
            else "this entry carries no recorded hash to check it against"
        )
        return RecordingSide(
            index, "recorder", active_state_ids(self._definition, value), value_text(value),
            f"the recording machine ({name}, compare_with) is in {value_text(value)!r} after entry {index}; {agrees}",
            reproduces=reproduces,
        )

    def _inferred(self, index: int) -> RecordingSide:
        entries = self.entries
        stop = min(len(entries), index + 1 + EVIDENCE_HORIZON)
        for j in range(index + 1, stop):
            event = entries[j].get("event") or {}
            event_type = str(event.get("type") or "")
            site = completion_site(event_type)
            if site is not None and site in self._invoked:
                states = self._with_ancestors(self._invoked[site])
                where = ", ".join(self._labels.get(s, s) for s in self._invoked[site])
                return RecordingSide(
                    index, "inferred", states, None,
                    f"the recording journaled {event_type} at entry {j}: {site} was running, so it was in "
                    f"{where} (which invokes {site})" + (f" by entry {j - 1}" if j - 1 > index else ""),
                )
            if event_type in self._handles and self._changed_recorded_state(j):
                candidates = self._handles[event_type]
                names = [self._labels.get(c, c) for c in candidates]
                return RecordingSide(
                    index, "inferred", self._with_ancestors(candidates), None,
                    f"the recording accepted {event_type} at entry {j} (its recorded hash changed), so it was in "
                    + (names[0] if len(names) == 1 else "one of " + ", ".join(names))
                    + (f" by entry {j - 1}" if j - 1 > index else ""),
                    candidates=len(candidates) > 1,
                )
        return RecordingSide(
            index, "inferred", [], None,
            ("the recording journaled nothing after this entry" if stop - index - 1 == 0 else
             f"the recording journaled nothing in the next {plural(stop - index - 1, 'entry', 'entries')}")
            + " that names its state; pass the machine that recorded the log as compare_with= to see it",
        )

    def _with_ancestors(self, state_ids: list[str]) -> list[str]:
        """The states and their ancestors, root first (the recording highlight lights the parents too, as the
        active one does)."""
        out: list[str] = []
        for state_id in state_ids:
            chain: list[str] = []
            current: str | None = state_id
            while current is not None:
                chain.append(current)
                current = self._parents.get(current)
            out += [s for s in reversed(chain) if s not in out]
        return out

    def _changed_recorded_state(self, j: int) -> bool:
        before = recorded_state_hash(self.entries[j - 1])
        after = recorded_state_hash(self.entries[j])
        return before is not None and after is not None and before != after
