"""`run_agent`: drive an agent machine over its event log until it settles `done | idle | error`.

It is the step path's loop (fold a transition, lower its actions with the same `EffectLedger`,
resolve owed effects with the same `perform_effect`) plus store journaling (write-ahead: no model
or task call starts before every earlier entry is durable), concurrency of in-flight effects
(completions are journaled in arrival order: that order is the serialization), and `@agent.usage`
entries. It never journals raised or internal events, and never runs a recorded call again.

Timers: by default (`timers="owed"`) an `after` timer is not slept on; the run settles `idle` with
the delay effect listed in `result.owed`, and the host journals `xstate.after.<delay>.<id>` when it
fires (the explorer and samples do exactly that). `timers="run"` sleeps on them in-process
(`time_scale` shrinks the wait in tests).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from ..canonical.jcs import state_hash
from ..engine import initial_transition, transition
from ..errors import (
    AgentError,
    AgentEventLogConflictError,
    AgentReplayDivergenceError,
    NonSerializableAgentEventError,
)
from ..eventlog.entries import create_replay_entry, init_entry, recorded_state_hash
from ..eventlog.machine_ref import find_machine_ref
from ..eventlog.replay import replay
from ..eventlog.snapshot_cache import resume_state
from ..eventlog.version_bridge import bridge_version, segment_version
from .effects import AgentEffect, EffectLedger, fold_ledger
from .execute import Outcome, perform_effect
from .executors import as_executors
from .parse import parse_agent_event

__all__ = ["RunResult", "run_agent"]

RunStatus = Literal["done", "idle", "error"]


@dataclass
class RunResult:
    """How a run settled. `events` is the whole self-contained log (init entry first): the resumed
    thread's entries plus the ones this run accepted. `ignored` is the host event the state had no
    transition for (journaled all the same). `owed` lists what an idle run still waits on."""

    status: RunStatus
    snapshot: Any = None
    output: Any = None
    error: Any = None
    cause: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    ignored: dict[str, Any] | None = None
    owed: list[AgentEffect] = field(default_factory=list)
    thread_id: str | None = None
    _journal: Any = field(default=None, repr=False)

    @property
    def new_events(self) -> list[dict[str, Any]]:
        start = self._journal.start_length if self._journal is not None else 0
        return self.events[start:]

    async def drain(self) -> None:
        """Wait until every write issued so far has landed. Never raises: a failed write has
        already settled the run with cause "journal"."""
        if self._journal is not None:
            await self._journal.drain()


class _Journal:
    """The run's log: accepts entries in order and writes each at its own index, in the background.

    `on_event` observes each accepted entry synchronously (with or without a store). Writes are
    chained so entry i+1 is appended only after entry i landed; `flush()` is the write-ahead fence
    awaited before any call starts. A failed write sets `failure` and wakes the run.
    """

    def __init__(
        self,
        entries: list[dict[str, Any]],
        store: Any,
        thread_id: str | None,
        on_event: Callable[[dict[str, Any]], Any] | None,
        wake: Callable[[], None],
    ) -> None:
        self.entries = entries
        self.start_length = len(entries)
        self.durable = len(entries)
        self.store = store
        self.thread_id = thread_id
        self.on_event = on_event
        self.failure: BaseException | None = None
        self._tail: asyncio.Task[None] | None = None
        self._wake = wake

    @property
    def next_index(self) -> int:
        return len(self.entries)

    def accept(self, entry: dict[str, Any]) -> None:
        self.entries.append(entry)
        if self.on_event is not None:
            self.on_event(entry)  # the observer seam: synchronous, at acceptance, never awaited
        if self.store is None:
            self.durable = len(self.entries)
            return
        previous = self._tail
        self._tail = asyncio.ensure_future(self._write(previous, entry))

    async def _write(self, previous: asyncio.Task[None] | None, entry: dict[str, Any]) -> None:
        if previous is not None:
            await asyncio.shield(previous)
        if self.failure is not None:
            return
        try:
            await self.store.append(thread_id=self.thread_id, expected_index=entry["index"], entries=[entry])
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - any storage failure settles the run "journal"
            self.failure = error
            self._wake()
            return
        self.durable = max(self.durable, entry["index"] + 1)

    async def flush(self) -> bool:
        """Wait for every accepted entry to be durable; False when a write failed."""
        while self._tail is not None:
            tail = self._tail
            await asyncio.shield(tail)
            if tail is self._tail:
                break
        return self.failure is None

    async def drain(self) -> None:
        # Writes record their own failure (the run already settled "journal"); never raise here.
        with contextlib.suppress(Exception):
            await self.flush()

    def durable_entries(self) -> list[dict[str, Any]]:
        return self.entries[: self.durable] if self.failure is not None else list(self.entries)


def _same_entry(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return dict(a) == dict(b)


async def _load_log(
    store: Any, thread_id: str | None, events: Sequence[Mapping[str, Any]] | None
) -> list[dict[str, Any]]:
    if store is None:
        return [dict(e) for e in (events or [])]
    stored = [dict(e) for e in await store.read(thread_id)]
    if events is None:
        return stored
    given = [dict(e) for e in events]
    if len(given) != len(stored):
        raise AgentEventLogConflictError(
            thread_id or "",
            len(given),
            len(stored),
            message=(
                f"run_agent was given {len(given)} events for thread {thread_id!r}, but the store holds "
                f"{len(stored)}: an explicit events log must BE the thread's log. Pass no events to "
                "resume from the store, or re-read the thread."
            ),
        )
    for index, (mine, theirs) in enumerate(zip(given, stored, strict=True)):
        if not _same_entry(mine, theirs):
            raise AgentError(
                f"Entry {index} of the given events (id {mine.get('id')!r}) differs from entry {index} "
                f"of thread {thread_id!r} (id {theirs.get('id')!r}): the explicit events are not this "
                "thread's log. Pass no events to resume from the store.",
                code="event-log-conflict",
                thread_id=thread_id,
                index=index,
            )
    return stored


def _persisted_of(machine: Any, snapshot: Any) -> dict[str, Any]:
    if isinstance(snapshot, Mapping):
        return {k: v for k, v in snapshot.items() if k != "agentMeta"}
    persisted: dict[str, Any] = machine.get_persisted_snapshot(snapshot)
    return persisted


class _Run:
    """One run's mutable state; `run_agent` builds it, `drive()` loops until it settles."""

    def __init__(self, machine: Any, executors: Any, options: dict[str, Any]) -> None:
        self.machine = machine
        self.executors = executors
        self.now = options["now"]
        self.ids = options["ids"]
        self.timers = options["timers"]
        self.time_scale = options["time_scale"]
        self.on_chunk = options["on_chunk"]
        self.max_transitions = options["max_transitions"]
        self.snapshot: Any = None
        self.ledger: EffectLedger | None = None
        self.journal: _Journal | None = None
        self.journaling = True
        self.completions: asyncio.Queue[tuple[AgentEffect, Outcome | BaseException] | None] = asyncio.Queue()
        self.inflight: dict[str, tuple[AgentEffect, asyncio.Task[None]]] = {}
        self.transitions = 0

    # -- journaling ------------------------------------------------------------------------------

    def wake(self) -> None:
        self.completions.put_nowait(None)

    def accept(self, event: dict[str, Any], snapshot_after: Any, causation_id: str | None) -> dict[str, Any]:

        assert self.journal is not None
        if not self.journaling:
            # No log at all (the initial state is not JSON): nothing is hashed, nothing recorded.
            return {"event": dict(event), "causationId": causation_id}
        entry = create_replay_entry(
            self.machine,
            event,
            self.journal.next_index,
            snapshot_after=snapshot_after,
            causation_id=causation_id,
            now=self.now,
            id=self.ids() if self.ids is not None else None,
        )
        self.journal.accept(entry)
        return entry

    def fold(self, event: dict[str, Any], causation_id: str | None) -> list[AgentEffect]:
        """Transition purely, journal the input, and lower what it surfaced (execute effects run)."""

        assert self.ledger is not None
        self.transitions += 1
        if self.transitions > self.max_transitions:
            raise AgentError(
                f"run_agent took {self.max_transitions} transitions without settling; a loop of "
                "completions never reaches an idle or final state (raise max_transitions if intended).",
                code="run-limit",
            )
        self.snapshot, actions = transition(self.machine, self.snapshot, event)
        entry = self.accept(event, self.snapshot, causation_id)
        effects = self.ledger.apply(entry, self.snapshot, actions)
        self.run_executes(effects)
        return effects

    def run_executes(self, effects: Sequence[AgentEffect]) -> None:
        for effect in effects:
            if effect.kind != "execute":
                continue
            action_type = getattr(effect.action, "type", "")
            if action_type == "xstate.cancel":
                self.cancel_timer(effect.send_id)
            effect.exec()

    def cancel_timer(self, send_id: str | None) -> None:
        for request_id, (effect, task) in list(self.inflight.items()):
            if effect.kind == "delay" and effect.send_id == send_id:
                task.cancel()
                del self.inflight[request_id]

    # -- effects in flight -----------------------------------------------------------------------

    def owed_now(self) -> list[AgentEffect]:
        assert self.ledger is not None
        return [e for e in self.ledger.owed() if e.kind != "delay" or self.timers == "run"]

    def reconcile(self) -> list[AgentEffect]:
        """Cancel in-flight work no longer owed; return the owed effects not yet started."""
        owed = self.owed_now()
        owed_ids = {e.request_id for e in owed}
        for request_id, (_effect, task) in list(self.inflight.items()):
            if request_id not in owed_ids:
                task.cancel()
                del self.inflight[request_id]
        return [e for e in owed if e.request_id not in self.inflight]

    def start(self, effect: AgentEffect) -> None:

        async def call() -> None:
            try:
                outcome: Outcome | BaseException = await perform_effect(
                    effect,
                    self.executors,
                    can_take=lambda event: bool(self.snapshot.can(event)),
                    on_chunk=self.on_chunk,
                    time_scale=self.time_scale,
                    validate=lambda event: parse_agent_event(self.machine, event),
                )
            except asyncio.CancelledError:
                return
            except BaseException as error:  # noqa: BLE001 - surfaced to the run loop, not lost
                outcome = error
            self.completions.put_nowait((effect, outcome))

        assert effect.request_id is not None
        self.inflight[effect.request_id] = (effect, asyncio.ensure_future(call()))

    def cancel_all(self) -> None:
        for _, task in self.inflight.values():
            task.cancel()
        self.inflight.clear()

    # -- the loop --------------------------------------------------------------------------------

    async def drive(self) -> tuple[str | None, Any]:
        """Loop until settled; returns (cause, error) for an error settle, else (None, None)."""
        assert self.journal is not None
        while self.snapshot.status == "active":
            to_start = self.reconcile()
            if to_start:
                # Write-ahead: no call starts until every entry before it is durable.
                if not await self.journal.flush():
                    return "journal", self.journal.failure
                for effect in to_start:
                    self.start(effect)
            if not self.inflight:
                return None, None  # idle: nothing async owed that this run executes
            item = await self.completions.get()
            if item is None:
                if self.journal.failure is not None:
                    return "journal", self.journal.failure
                continue
            effect, outcome = item
            current = self.inflight.get(effect.request_id or "")
            if current is None or current[0] is not effect:
                continue  # cancelled meanwhile (its state was left): nothing to journal
            del self.inflight[effect.request_id or ""]
            if isinstance(outcome, BaseException):
                return (outcome.code if isinstance(outcome, AgentError) else "executor"), outcome
            if outcome.event is not None:
                self.fold(outcome.event, outcome.causation_id)
            for usage in outcome.usage:
                # Spend is journaled after the completion it paid for; it never transitions.
                usage_entry = self.accept(usage, self.snapshot, outcome.causation_id)
                assert self.ledger is not None
                self.ledger.apply(usage_entry, self.snapshot, [])
            if self.journal.failure is not None:
                return "journal", self.journal.failure
        return None, None


async def run_agent(
    machine: Any,
    *,
    input: Any = None,
    store: Any = None,
    thread_id: str | None = None,
    event: Mapping[str, Any] | None = None,
    events: Sequence[Mapping[str, Any]] | None = None,
    snapshot: Any = None,
    executors: Any = None,
    on_event: Callable[[dict[str, Any]], Any] | None = None,
    metadata: Mapping[str, Any] | None = None,
    machine_ref: str | None = None,
    log_id: str | None = None,
    now: Callable[[], datetime] | None = None,
    ids: Callable[[], str] | None = None,
    timers: Literal["owed", "run"] = "owed",
    time_scale: float = 1.0,
    on_chunk: Callable[[str], Any] | None = None,
    max_transitions: int = 10_000,
) -> RunResult:
    """Run `machine` until it settles `done | idle | error` (docs/semantics/runtime.md).

    With `store` (and the required `thread_id`) the thread's log is the resume, and every accepted
    input is appended at its own index before any later call starts; a rejected write aborts the
    in-flight work and settles `error` with `cause="journal"`. `on_event` observes each accepted
    entry synchronously (init first), with or without a store. `event` is one host input applied
    after the resume (journaled even when `result.ignored`); `snapshot` with no log starts a new
    segment whose init entry carries it; with a log of this version it is checked as a cache
    (`AgentSnapshotDivergedError`), with `events` of another version it is migrated (the version
    bridge). A resumed log is folded once and its end checked against the tail `stateHash`.

    Settles `error` with `cause` "journal" (a write failed), "machine" (the machine reached
    status error), or an `AgentError` code (e.g. "missing-executor": nothing is journaled for a
    call the host cannot make). Decisions' chosen events go through `parse_agent_event`.
    `now` and `ids` inject the clock and id generator so a log regenerates byte-identically;
    `machine_ref` (else found among imported modules) and `metadata` go on a new init entry.
    """

    if store is not None and thread_id is None:
        raise AgentError(
            "run_agent was given a store but no thread_id: the store needs the thread this run owns "
            "(run_agent(machine, store=store, thread_id='session-1', ...)).",
            code="missing-thread-id",
        )
    if timers not in ("owed", "run"):
        raise AgentError(f"timers must be 'owed' or 'run', not {timers!r}.", code="invalid-argument")
    run = _Run(
        machine,
        as_executors(executors),
        {
            "now": now,
            "ids": ids,
            "timers": timers,
            "time_scale": time_scale,
            "on_chunk": on_chunk,
            "max_transitions": max_transitions,
        },
    )

    def segment_metadata() -> dict[str, Any]:
        """A new segment's init metadata: the host's, plus executionId and machineRef."""
        base = dict(metadata or {})
        base.setdefault("executionId", ids() if ids is not None else uuid.uuid4().hex)
        ref = machine_ref or find_machine_ref(machine)
        if ref is not None:
            base.setdefault("machineRef", ref)
        return base

    log = await _load_log(store, thread_id, events)
    bridged = False
    if log and snapshot is not None:
        segment = _bridge_or_check(machine, log, snapshot, log_id or thread_id, now, ids, segment_metadata)
        bridged = segment is not log
        if bridged and store is not None:
            raise AgentError(
                f"Thread {thread_id!r} holds a log of another machine version; a version bridge starts "
                "a new segment, so run it on a new thread (or without a store) with events=old_entries.",
                code="version-bridge-needs-new-thread",
            )
        log = segment
    entries: list[dict[str, Any]] = []
    run.journal = _Journal(entries, store, thread_id, on_event, run.wake)
    if log and not bridged:
        run.snapshot, _, run.ledger, _ = fold_ledger(machine, log)
        _verify_tail(machine, log, run.snapshot)
        entries.extend(log)
        run.journal.start_length = run.journal.durable = len(log)
    elif log:
        # A fresh segment from the bridged snapshot: its init entry is this run's first write.
        run.snapshot, _, run.ledger, _ = fold_ledger(machine, log)
        run.journal.accept(log[0])
    else:
        base_meta = segment_metadata()
        run.ledger = EffectLedger(machine)
        init: dict[str, Any] | None
        actions: list[Any]
        if snapshot is not None:
            persisted = _persisted_of(machine, snapshot)
            run.snapshot, actions = machine.restore_snapshot(persisted), []
            init = init_entry(machine, snapshot=persisted, metadata=base_meta, now=now, id=ids() if ids else None)
        else:
            run.snapshot, actions = initial_transition(machine, input=input)
            try:
                init = init_entry(machine, input=input, metadata=base_meta, now=now, id=ids() if ids else None)
            except NonSerializableAgentEventError:
                init = None  # an unserializable initial state produces no log at all (docs/semantics/runtime.md)
        if init is None:
            run.journaling = False
            init = {"event": {"type": "@agent.init"}}
        else:
            run.journal.accept(init)
        run.run_executes(run.ledger.start(init, run.snapshot, actions))

    result = RunResult(status="idle", thread_id=thread_id, _journal=run.journal)
    if run.snapshot.status != "active":
        if event is not None:
            result.ignored = dict(event)
        return await _settle(run, result, None, None)
    cause: str | None = None
    error: Any = None
    try:
        if event is not None:
            host_event = dict(event)
            if not run.snapshot.can(host_event):
                result.ignored = host_event
            run.fold(host_event, None)
        cause, error = await run.drive()
    except asyncio.CancelledError:
        run.cancel_all()
        raise
    except AgentError as failure:
        cause, error = failure.code, failure
    finally:
        run.cancel_all()
    return await _settle(run, result, cause, error)


def _verify_tail(machine: Any, log: Sequence[Mapping[str, Any]], snapshot: Any) -> None:
    """Resume only from the state the log recorded: the fold's end must hash to the tail entry's
    `verification.stateHash` (one hash, not one per entry: a resume needs the end state to be the
    recorded one). On a mismatch, or with no hash at the tail, replay verifies every entry and
    raises `AgentReplayDivergenceError` naming the first divergent one."""

    tail = log[-1]
    recorded = recorded_state_hash(tail)
    if recorded is not None and state_hash(machine.get_persisted_snapshot(snapshot)) == recorded:
        return
    replay(machine, log, verify=True)
    if recorded is not None:
        raise AgentReplayDivergenceError(
            f"The log's tail entry {len(log) - 1} (id {tail.get('id')!r}) recorded stateHash {recorded}, "
            "but the machine folds the log to another state: it cannot be resumed.",
            event_id=tail.get("id"),
            index=len(log) - 1,
            kind="state",
            expected_hash=recorded,
            actual_hash=state_hash(machine.get_persisted_snapshot(snapshot)),
        )


def _bridge_or_check(
    machine: Any,
    log: list[dict[str, Any]],
    snapshot: Any,
    log_id: str | None,
    now: Any,
    ids: Callable[[], str] | None,
    segment_metadata: Callable[[], dict[str, Any]],
) -> list[dict[str, Any]]:
    """Same version: check the snapshot as a cache of the log (the log is then folded). Another
    version: the version bridge, a new segment whose init entry carries the migrated snapshot."""

    persisted = snapshot if isinstance(snapshot, Mapping) else machine.get_persisted_snapshot(snapshot)
    machine_id, version = segment_version(log)
    if machine_id == machine.id and version == machine.version:
        # Snapshot as cache: raises AgentSnapshotDivergedError when it disagrees with the log.
        # The log is folded regardless, because only the log knows what is still owed.
        resume_state(machine, log, persisted, log_id)
        return log
    metadata = segment_metadata()
    return bridge_version(machine, log, persisted, log_id=log_id, metadata=metadata, now=now,
                          id=ids() if ids is not None else None)


async def _settle(run: _Run, result: RunResult, cause: str | None, error: Any) -> RunResult:
    assert run.journal is not None
    run.cancel_all()
    if cause is None and not await run.journal.flush():
        cause, error = "journal", run.journal.failure
    if run.journal.failure is not None:
        cause, error = "journal", run.journal.failure
    snapshot = run.snapshot
    result.snapshot = snapshot
    result.events = run.journal.durable_entries() if run.journaling else []
    if cause is not None:
        result.status, result.cause, result.error = "error", cause, error
    elif snapshot.status == "done":
        result.status, result.output = "done", snapshot.output
    elif snapshot.status == "error":
        result.status, result.cause, result.error = "error", "machine", snapshot.error
    else:
        result.status = "idle"
        result.owed = run.ledger.owed() if run.ledger is not None else []
    return result
