"""Lowering a frontier into agent effects, and the ledger of effects still owed (docs/semantics/step-path.md).

`get_agent_effects` turns one transition's actions into ordered effects (`text`, `decision`, `plan`,
`task`, `delay`, `execute`) in document order, then appends the snapshot-only ones still owed;
`EffectLedger` folds a journal to know exactly what is owed at its end (the fan-out branches not yet
completed, the timers not yet fired). Request ids are `site#occurrence` counted from the journal.
Pure: nothing here executes an effect, awaits, reads a clock, or writes a log.
"""

from __future__ import annotations

import dataclasses
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..engine._util import UNDEFINED
from ..engine.actors import resolve_logic
from ..errors import AgentError
from ..eventlog.entries import INIT_EVENT_TYPE, USAGE_EVENT_TYPE, normalize_error
from ..eventlog.fold import Step, fold, seed
from .agent_setup import logic_kind
from .executors import AgentRequest
from .parse import event_schemas

__all__ = [
    "EFFECT_KINDS",
    "EXECUTE_ACTION_TYPES",
    "AgentEffect",
    "EffectLedger",
    "JournalCounts",
    "completion_site",
    "event_of",
    "fold_ledger",
    "get_agent_effects",
    "is_entry",
    "owed_effects",
    "to_done_event",
    "to_error_event",
]

EFFECT_KINDS = ("text", "decision", "plan", "task", "delay", "execute")
#: Built-in actions a host runs once at the frontier (never journaled, never replayed).
EXECUTE_ACTION_TYPES = frozenset({"xstate.sendTo", "xstate.cancel", "xstate.emit", "xstate.log"})
DONE_PREFIX = "xstate.done.actor."
ERROR_PREFIX = "xstate.error.actor."


def to_done_event(site: str, output: Any) -> dict[str, Any]:
    """`xstate.done.actor.<site>` carrying `output` inline, as XState names it."""
    return {"type": f"{DONE_PREFIX}{site}", "output": output}


def to_error_event(site: str, error: Any) -> dict[str, Any]:
    """`xstate.error.actor.<site>` with the error normalised to `{name, message, cause?}`."""
    return {"type": f"{ERROR_PREFIX}{site}", "error": normalize_error(error)}


def completion_site(event_type: str) -> str | None:
    """The actor id a done/error event completes, or None for any other event."""
    if event_type.startswith(DONE_PREFIX):
        return event_type[len(DONE_PREFIX) :]
    if event_type.startswith(ERROR_PREFIX):
        return event_type[len(ERROR_PREFIX) :]
    return None


def is_entry(item: Mapping[str, Any]) -> bool:
    """History items may be log entries (`{"event": ...}`) or bare events (`{"type": ...}`)."""
    return "event" in item and "type" not in item


def event_of(item: Mapping[str, Any]) -> Mapping[str, Any]:
    return item["event"] if is_entry(item) else item


@dataclass(frozen=True, eq=False)
class AgentEffect:
    """One thing a host owes at a frontier.

    `request_id` (`site#occurrence`) is set on every kind but `execute`. `exec()` runs an execute
    effect's action (builtins do nothing in-process: the host interprets `.action.type/.params`).
    A `delay` carries the `event` to journal when it fires and `delay` in milliseconds.
    """

    kind: str
    site: str | None = None
    request_id: str | None = None
    request: AgentRequest | None = None
    logic: Any = None
    action: Any = None
    event: dict[str, Any] | None = None
    delay: int | float | None = None
    send_id: str | None = None

    @property
    def mode(self) -> str | None:
        return self.request.mode if self.request is not None and self.kind == "text" else None

    def exec(self) -> Any:
        return self.action.exec() if self.action is not None else None

    def to_done_event(self, output: Any) -> dict[str, Any]:
        self._require_site("to_done_event")
        return to_done_event(self.site or "", output)

    def to_error_event(self, error: Any) -> dict[str, Any]:
        self._require_site("to_error_event")
        return to_error_event(self.site or "", error)

    def _require_site(self, what: str) -> None:
        if self.kind not in ("text", "task", "plan", "decision") or self.site is None:

            raise AgentError(f"A {self.kind!r} effect has no actor completion ({what}).", code="invalid-argument")

    def __repr__(self) -> str:
        if self.kind == "execute":
            return f"AgentEffect(execute, {getattr(self.action, 'type', None)!r})"
        return f"AgentEffect({self.kind}, {self.request_id!r})"


class JournalCounts:
    """What a journal says about occurrences: completions per site, decisions per site, timer
    firings per event type, and the events each request caused (a plan's applied trail)."""

    __slots__ = ("caused", "completions", "execution_id", "fired", "trail")

    # Plain dicts (a missing key reads as 0 through .get): a line's fold copies the counts at every point it
    # caches, and dict.copy is several times cheaper than building a Counter.
    def __init__(self) -> None:
        self.completions: dict[str, int] = {}
        self.caused: dict[str, int] = {}
        self.fired: dict[str, int] = {}
        # Each trail is replaced, never appended to in place, so a copy of the counts can share them.
        self.trail: dict[str, tuple[dict[str, Any], ...]] = {}
        self.execution_id: str | None = None

    def add(self, item: Mapping[str, Any]) -> None:
        entry = is_entry(item)
        event = item["event"] if entry else item
        event_type = event.get("type", "")
        if event_type == INIT_EVENT_TYPE:
            metadata = item.get("metadata") if entry else None
            if isinstance(metadata, Mapping) and isinstance(metadata.get("executionId"), str):
                self.execution_id = metadata["executionId"]
            return
        if event_type == USAGE_EVENT_TYPE:
            return
        site = completion_site(event_type)
        if site is not None:
            self.completions[site] = self.completions.get(site, 0) + 1
            return
        self.fired[event_type] = self.fired.get(event_type, 0) + 1
        causation = item.get("causationId") if entry else None
        if isinstance(causation, str) and "#" in causation:
            decided = causation.rsplit("#", 1)[0]
            self.caused[decided] = self.caused.get(decided, 0) + 1
            self.trail[causation] = (*self.trail.get(causation, ()), dict(event))

    def copy(self, trail: dict[str, tuple[dict[str, Any], ...]] | None = None) -> JournalCounts:
        """An independent copy (`trail`: the trails to keep instead of all of them)."""
        clone = JournalCounts.__new__(JournalCounts)
        clone.completions = self.completions.copy()
        clone.caused = self.caused.copy()
        clone.fired = self.fired.copy()
        clone.trail = dict(self.trail) if trail is None else trail  # trails are immutable tuples: shallow is enough
        clone.execution_id = self.execution_id
        return clone

    @classmethod
    def of(cls, history: Iterable[Mapping[str, Any]] | None) -> JournalCounts:
        counts = cls()
        for item in history or ():
            counts.add(item)
        return counts

    def occurrence(self, kind: str, site: str) -> int:
        # Errors count as completions (a retry is a fresh occurrence). A decision completes with
        # the machine event it chose, journaled with the decision's request id as causationId.
        base = self.completions.get(site, 0)
        if kind == "decision":
            base += self.caused.get(site, 0)
        return base + 1

    def call_key(self, request_id: str) -> str:
        return f"{self.execution_id}:{request_id}" if self.execution_id else request_id


_DEFINITION_INDEX: weakref.WeakKeyDictionary[Any, dict[str, tuple[Mapping[str, Any], str | None]]] = (
    weakref.WeakKeyDictionary()
)


def _definition_index(machine: Any) -> dict[str, tuple[Mapping[str, Any], str | None]]:
    """`{node id: (definition node, parent id)}` from `machine.definition`, built once a machine."""
    index = _DEFINITION_INDEX.get(machine)
    if index is None:
        index = {}
        stack: list[tuple[Mapping[str, Any], str | None]] = [(machine.definition, None)]
        while stack:
            node, parent = stack.pop()
            index[node["id"]] = (node, parent)
            for child in (node.get("states") or {}).values():
                stack.append((child, node["id"]))
        _DEFINITION_INDEX[machine] = index
    return index


def _legal_event_types(machine: Any, snapshot: Any, site: str, restrict: Sequence[str] | None) -> tuple[str, ...]:
    """Event types the invoking state and its ancestors handle (`machine.definition`'s `on`); for
    a spawned decision, every active state's. Internal (`xstate.*`), log (`@agent.*`) and
    wildcard descriptors are never candidates."""
    if restrict is not None:
        return tuple(restrict)
    index = _definition_index(machine)
    active = [state_id for state_id in getattr(snapshot, "state_ids", ()) if state_id in index]
    owner = next(
        (sid for sid in active if any(inv.get("id") == site for inv in index[sid][0].get("invoke") or ())), None
    )
    scope: list[str] = []
    if owner is not None:
        current: str | None = owner
        while current is not None:
            scope.append(current)
            current = index[current][1]
    else:
        scope = list(reversed(active))
    seen: dict[str, None] = {}
    for state_id in scope:
        for descriptor in index[state_id][0].get("on") or {}:
            if not descriptor or "*" in descriptor or descriptor.startswith(("xstate.", "@agent.")):
                continue
            seen.setdefault(descriptor, None)
    return tuple(seen)


def _logic_for(machine: Any, snapshot: Any, site: str, src: Any) -> Any:
    child = (getattr(snapshot, "children", None) or {}).get(site)
    if child is not None and getattr(child, "logic", None) is not None:
        return child.logic
    return resolve_logic(machine, src)  # None for an unknown source: a task with no logic


def _request(
    machine: Any,
    kind: str,
    logic: Any,
    site: str,
    src: Any,
    input: Any,
    context: Any,
    event: Any,
    snapshot: Any,
    counts: JournalCounts,
) -> AgentRequest:
    occurrence = counts.occurrence(kind, site)
    request_id = f"{site}#{occurrence}"
    input_value = None if input is UNDEFINED else input
    prompt = None
    if kind in ("text", "decision", "plan") and hasattr(logic, "build_prompt"):
        prompt = logic.build_prompt(context, event, input_value)
    events: tuple[str, ...] = ()
    applied: tuple[dict[str, Any], ...] = ()
    max_steps = None
    stop_on: tuple[str, ...] = ()
    if kind in ("decision", "plan"):
        events = _legal_event_types(machine, snapshot, site, getattr(logic, "events", None))
    if kind == "plan":
        applied = tuple(counts.trail.get(request_id, ()))
        max_steps = getattr(logic, "max_steps", None)
        stop_on = tuple(getattr(logic, "stop_on", ()))
    return AgentRequest(
        kind=kind,
        request_id=request_id,
        site=site,
        occurrence=occurrence,
        src=src if isinstance(src, str) else None,
        input=input_value,
        prompt=prompt,
        mode=getattr(logic, "mode", "generate") if kind == "text" else "generate",
        model=getattr(logic, "model", None),
        events=events,
        call_key=counts.call_key(request_id),
        max_steps=max_steps,
        stop_on=stop_on,
        applied=applied,
        options=dict(getattr(logic, "options", {}) or {}),
        schemas=event_schemas(machine) if kind in ("decision", "plan") else {},
    )


def _actor_effect(
    machine: Any, logic: Any, site: str, src: Any, input: Any, context: Any, event: Any, snapshot: Any, counts: JournalCounts
) -> AgentEffect:
    """The effect a live child (invoked, spawned or restored) owes: its kind, from its logic, and its request."""
    kind = logic_kind(logic)
    request = _request(machine, kind, logic, site, src, input, context, event, snapshot, counts)
    return AgentEffect(kind=kind, site=site, request_id=request.request_id, request=request, logic=logic)


def _spawn_effect(machine: Any, snapshot: Any, action: Any, counts: JournalCounts, fallback_event: Any) -> AgentEffect | None:
    params = action.params or {}
    site = params.get("id")
    src = params.get("src")
    if site is None:
        return None
    children = getattr(snapshot, "children", None) or {}
    if site not in children:
        return None  # spawned and stopped within the same macrostep: nothing is owed
    info = getattr(action, "info", None) or {}
    return _actor_effect(
        machine, _logic_for(machine, snapshot, site, src), site, src, params.get("input", UNDEFINED),
        info.get("context", snapshot.context), info.get("event", fallback_event), snapshot, counts,
    )


def _delay_effect(action: Any, counts: JournalCounts) -> AgentEffect:
    params = action.params or {}
    event = dict(params.get("event") or {})
    send_id = params.get("id")
    site = str(send_id) if send_id is not None else str(event.get("type"))
    occurrence = counts.fired.get(str(event.get("type")), 0) + 1
    return AgentEffect(
        kind="delay",
        site=site,
        request_id=f"{site}#{occurrence}",
        action=action,
        event=event,
        delay=params.get("delay"),
        send_id=str(send_id) if send_id is not None else None,
    )


def lower_actions(
    machine: Any, snapshot: Any, actions: Sequence[Any], counts: JournalCounts, fallback_event: Any = None
) -> list[AgentEffect]:
    """One transition's actions as effects, in the order the engine returned them (document order)."""
    effects: list[AgentEffect] = []
    for action in actions:
        action_type = getattr(action, "type", "")
        params = getattr(action, "params", None) or {}
        if action_type == "xstate.spawnChild":
            effect = _spawn_effect(machine, snapshot, action, counts, fallback_event)
            if effect is not None:
                effects.append(effect)
        elif action_type == "xstate.raise":
            if "delay" in params and params.get("delay") is not None:
                effects.append(_delay_effect(action, counts))
        elif action_type in EXECUTE_ACTION_TYPES:
            send_id = params.get("sendId") if action_type == "xstate.cancel" else None
            effects.append(AgentEffect(kind="execute", action=action, send_id=send_id))
        elif action_type == "xstate.stopChild" or action_type.startswith("xstate."):
            continue  # stopping a child is the ledger's business; nothing for a host to run
        else:
            effects.append(AgentEffect(kind="execute", action=action))
    return effects


class EffectLedger:
    """What a journal still owes, folded entry by entry alongside the machine.

    `apply` takes each transition (the event, the snapshot after it, its actions) and returns the
    effects that transition newly surfaced; `owed()` lists every non-execute effect still owed, in
    the order it was first surfaced. A child is owed until its completion is journaled (for a
    decision: the event it chose) or it is stopped; a timer until it fires or is cancelled; a plan
    re-surfaces with its candidates and applied trail recomputed from the live snapshot.
    """

    def __init__(self, machine: Any) -> None:
        self.machine = machine
        self.counts = JournalCounts()
        self.snapshot: Any = None
        self.last_event: Any = None
        self.last_surfaced: list[AgentEffect] = []  # what the last transition taken surfaced
        self._pending: dict[str, AgentEffect] = {}
        self._surfaced_at: dict[str, int] = {}  # site -> index of the entry that surfaced its pending effect
        self._index = 0

    @classmethod
    def start_from(cls, machine: Any, init: Step) -> EffectLedger:
        """A ledger seeded from a log's init step: the `LedgerFactory` a Timeline or replay folds along."""
        ledger = cls(machine)
        ledger.last_surfaced = ledger.start(init.entry, init.snapshot, init.actions or [])
        return ledger

    @classmethod
    def resumed(cls, machine: Any, snapshot: Any, timers: Iterable[AgentEffect]) -> EffectLedger:
        """A ledger for a fold that goes on from a cached persisted snapshot instead of the log's start.

        The snapshot's children are owed as a restored init owes them (at-least-once); `timers`, the delays
        the cache kept from the ledger it replaces, are owed again as they were (a snapshot does not carry them).
        """
        ledger = cls.start_from(machine, Step(0, {"event": {"type": INIT_EVENT_TYPE}}, snapshot, [], True))
        for timer in timers:
            if timer.kind == "delay" and timer.site is not None:
                ledger._pending[timer.site] = timer
        return ledger

    def step(self, step: Step) -> None:
        """Take one folded entry after the init (the log layer's `Ledger` protocol). An entry the fold
        could not apply (`step.error`) changes nothing: the machine did not take it either."""
        if step.error is not None:
            return
        self._index = step.index
        surfaced = self.apply(step.entry, step.snapshot, step.actions or [])
        if step.actions is not None:
            self.last_surfaced = surfaced

    def surfaced_at(self, site: str | None) -> int | None:
        """The index of the entry whose transition surfaced the effect still owed at `site`."""
        return self._surfaced_at.get(site) if site is not None else None

    def start(self, init_item: Mapping[str, Any], snapshot: Any, actions: Sequence[Any]) -> list[AgentEffect]:
        """Seed from the init item. A restored snapshot has no actions, so children it holds are
        taken as owed (at-least-once): a snapshot cannot say whether they completed."""
        self.counts.add(init_item)
        event = event_of(init_item)
        init_event = {"type": "xstate.init", "input": event.get("input")}
        effects = self._after(snapshot, actions, init_event)
        if not actions and getattr(snapshot, "status", None) == "active":
            for site, child in (getattr(snapshot, "children", None) or {}).items():
                self._pending[site] = _actor_effect(
                    self.machine, getattr(child, "logic", None), site, child.src, child.input, snapshot.context,
                    init_event, snapshot, self.counts,
                )
        return effects

    def apply(self, item: Mapping[str, Any], snapshot: Any, actions: Sequence[Any]) -> list[AgentEffect]:
        """Record a journaled item (entry or bare event) and the transition it caused."""
        event = event_of(item)
        event_type = event.get("type", "")
        if event_type == USAGE_EVENT_TYPE:
            self.counts.add(item)
            return []
        causation = item.get("causationId") if is_entry(item) else None
        site = completion_site(event_type)
        if site is not None:
            pending = self._pending.get(site)
            if pending is not None and pending.kind != "delay":
                del self._pending[site]
        else:
            for key, pending in list(self._pending.items()):
                if pending.kind == "delay" and pending.event is not None and pending.event.get("type") == event_type:
                    del self._pending[key]
                    break
            if isinstance(causation, str):
                decided = [k for k, p in self._pending.items() if p.kind == "decision" and p.request_id == causation]
                for key in decided:
                    del self._pending[key]
        self.counts.add(item)
        return self._after(snapshot, actions, dict(event))

    def _after(self, snapshot: Any, actions: Sequence[Any], event: Any) -> list[AgentEffect]:
        self.snapshot = snapshot
        self.last_event = event
        for action in actions:
            if getattr(action, "type", "") == "xstate.stopChild":
                self._pending.pop(str((action.params or {}).get("id")), None)
            elif getattr(action, "type", "") == "xstate.cancel":
                send_id = (action.params or {}).get("sendId")
                for key, pending in list(self._pending.items()):
                    if pending.kind == "delay" and pending.send_id == send_id:
                        del self._pending[key]
        effects = lower_actions(self.machine, snapshot, actions, self.counts, event)
        for effect in effects:
            if effect.kind != "execute" and effect.site is not None:
                previous = self._pending.pop(effect.site, None)  # re-entry replaces, keeping surfacing order
                self._pending[effect.site] = effect
                if previous is None or previous.request_id != effect.request_id:
                    self._surfaced_at[effect.site] = self._index
        children = getattr(snapshot, "children", None) or {}
        for key, pending in list(self._pending.items()):
            if pending.kind != "delay" and key not in children:
                del self._pending[key]
        if getattr(snapshot, "status", "active") != "active":
            self._pending.clear()
        return effects

    def copy(self) -> EffectLedger:
        """An independent ledger in the same state (folding on from the copy never touches this one).

        Effects and snapshots are immutable, so only the containers are copied, and the trails no later
        fold reads are dropped: trails are read only for plans (a plan's applied events, by its request
        id), and a request id is fresh when its plan surfaces, so only the trails of plans still owed
        matter. Without this every checkpoint of a long log would carry a trail key per decision ever
        answered: O(n) each, O(n^2 / K) in all.
        """
        clone = EffectLedger.__new__(EffectLedger)
        clone.machine = self.machine
        trails = self.counts.trail
        plans = [e.request_id for e in self._pending.values() if e.kind == "plan"] if trails else []
        clone.counts = self.counts.copy({key: trails[key] for key in plans if key is not None and key in trails})
        clone.snapshot = self.snapshot
        clone.last_event = self.last_event
        clone.last_surfaced = self.last_surfaced
        clone._pending = dict(self._pending)
        surfaced = self._surfaced_at
        clone._surfaced_at = {site: surfaced[site] for site in clone._pending if site in surfaced}
        clone._index = self._index
        return clone

    def owed(self) -> list[AgentEffect]:
        out: list[AgentEffect] = []
        for effect in self._pending.values():
            if effect.kind == "plan":
                effect = self._refresh_plan(effect)
            out.append(effect)
        return out

    def _refresh_plan(self, effect: AgentEffect) -> AgentEffect:
        assert effect.request is not None
        request = dataclasses.replace(
            effect.request,
            events=_legal_event_types(
                self.machine, self.snapshot, effect.site or "", getattr(effect.logic, "events", None)
            ),
            applied=tuple(self.counts.trail.get(effect.request.request_id, ())),
        )
        return dataclasses.replace(effect, request=request)


class _Fold:
    """A fold in progress over one journal: extendable as the journal grows."""

    __slots__ = ("actions", "entries", "items", "ledger", "machine", "snapshot")

    def __init__(self, machine: Any, first: Mapping[str, Any] | None) -> None:
        self.machine = machine
        self.entries = first is None or is_entry(first)
        # Entries stamped by another machine version are refused, as replay refuses them (an init entry
        # carrying a snapshot is exempt: it is the version bridge); bare events carry no version.
        init = seed(machine, first if self.entries else {"event": first}, check_version=self.entries)
        assert first is not None  # seed refused a journal without its init item
        self.ledger = EffectLedger.start_from(machine, init)
        self.snapshot, self.actions = init.snapshot, list(init.actions or [])
        self.items: list[Mapping[str, Any]] = [first]

    def extend(self, source: Sequence[Mapping[str, Any]]) -> None:
        """Fold `source[len(items):]` (the caller checked that `items` is its prefix)."""
        new = source[len(self.items) :]
        if not new:
            return
        wrapped = new if self.entries else [{"event": item} for item in new]
        ledger = self.ledger
        ledger.snapshot = self.snapshot  # get_agent_effects may have pointed it elsewhere
        for step in fold(self.machine, wrapped, start=(len(self.items) - 1, self.snapshot), check_version=self.entries):
            ledger.step(step)
            if step.actions is not None:
                self.actions = step.actions
            self.snapshot = step.snapshot
        self.items.extend(new)

    @property
    def effects(self) -> list[AgentEffect]:
        return self.ledger.last_surfaced

    def is_prefix_of(self, machine: Any, source: Sequence[Mapping[str, Any]]) -> bool:
        """Are the folded items the very same objects as `source`'s first ones? Pointer
        comparisons (cheap next to a transition), so an entry edited or swapped in place refolds."""
        if self.machine is not machine or len(source) < len(self.items):
            return False
        return all(a is b for a, b in zip(self.items, source, strict=False))


# Hosts call get_agent_effects once per step with a growing journal, and a timeline asks for
# successive prefixes of one log; folding only the new tail keeps both linear instead of
# quadratic. Keyed by the identity of the journal's first item (held by the fold, so the id cannot
# be reused while cached); reuse requires every folded item to be identical (`is_prefix_of`).
_FOLDS: OrderedDict[int, _Fold] = OrderedDict()
_FOLDS_MAX = 8


_FOLDS_LOCK = threading.Lock()  # a cached fold is extended in place: one thread at a time


def _fold(machine: Any, history: Sequence[Mapping[str, Any]], *, reuse: bool) -> _Fold:
    first = history[0] if history else None
    if not reuse:
        fold_ = _Fold(machine, first)
        fold_.extend(history)
        return fold_
    key = id(first)
    with _FOLDS_LOCK:
        cached = _FOLDS.get(key)
        if cached is None or not cached.is_prefix_of(machine, history):
            cached = _Fold(machine, first)
        cached.extend(history)
        _FOLDS[key] = cached
        _FOLDS.move_to_end(key)
        while len(_FOLDS) > _FOLDS_MAX:
            _FOLDS.popitem(last=False)
        return cached


def fold_ledger(machine: Any, history: Sequence[Mapping[str, Any]]) -> tuple[Any, list[Any], EffectLedger, list[AgentEffect]]:
    """Fold a whole journal (starting with its init item) into (snapshot, last actions, ledger,
    effects of the last transition). Pure: the engine's transitions only."""
    folded = _fold(machine, list(history), reuse=False)
    return folded.snapshot, folded.actions, folded.ledger, folded.effects


def owed_effects(machine: Any, entries: Sequence[Mapping[str, Any]]) -> list[AgentEffect]:
    """What a journal still owes at its end: every non-execute effect, in surfacing order (the step
    path's crash recovery; execute effects ran once when surfaced and are never replayed)."""
    # The shared prefix fold: a host asking after each step pays for the new entries, not the journal again.
    return _fold(machine, list(entries), reuse=True).ledger.owed()


def _is_full_log(history: Sequence[Mapping[str, Any]] | None) -> bool:
    return bool(history) and event_of(history[0]).get("type") == INIT_EVENT_TYPE  # type: ignore[index]


def get_agent_effects(
    machine: Any,
    snapshot: Any,
    actions: Sequence[Any],
    history: Sequence[Mapping[str, Any]] | None = None,
) -> list[AgentEffect]:
    """Lower a frontier into ordered effects: the actions' effects in document order, then the
    snapshot-only effects still owed (children spawned earlier, a re-surfacing plan), by site id.

    `history` is the journal so far (log entries, or bare events); request
    ids count occurrences from it. When it starts with its `@agent.init` item it is folded to know
    exactly which earlier children and timers are still owed; otherwise a child still present in
    the snapshot with no completion in `history` is taken as owed. `history` should end with the
    entry that produced `snapshot` (as the loop in docs/semantics/step-path.md "The host loop" does). Pass
    entries rather than bare events when decisions repeat: a decision's occurrence is counted
    from `causationId`.
    """
    history = history if isinstance(history, list) else list(history or [])
    if snapshot is None:
        return []
    if getattr(snapshot, "status", "active") != "active":
        # A settled machine owes nothing async; its last transition's actions still run once.
        lowered = lower_actions(machine, snapshot, actions, JournalCounts.of(history))
        return [e for e in lowered if e.kind == "execute"]
    ledger: EffectLedger | None
    if _is_full_log(history):
        ledger = _fold(machine, history, reuse=True).ledger
        counts = ledger.counts
        last_event = ledger.last_event
    else:
        ledger = None
        counts = JournalCounts.of(history)
        last_event = dict(event_of(history[-1])) if history else None
    effects = lower_actions(machine, snapshot, actions, counts, last_event)
    seen = {e.site for e in effects if e.kind != "execute"}
    extra: list[AgentEffect] = []
    children = getattr(snapshot, "children", None) or {}
    if ledger is not None:
        ledger.snapshot = snapshot
        # Only what the given snapshot still holds (a history one entry behind must not resurrect
        # a child the last transition stopped).
        extra = [
            e for e in ledger.owed() if e.site not in seen and (e.kind == "delay" or e.site in children)
        ]
    else:
        for site, child in children.items():
            if site in seen or counts.completions.get(site) or counts.caused.get(site):
                continue
            extra.append(_actor_effect(
                machine, getattr(child, "logic", None), site, child.src, child.input, snapshot.context, last_event,
                snapshot, counts,
            ))
    out = effects + extra
    if ledger is not None:
        return [ledger._refresh_plan(e) if e.kind == "plan" else e for e in out]
    return out
