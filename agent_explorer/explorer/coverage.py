"""Coverage: how often each state was entered and each transition taken, over one log or many.

One pure traced fold per log (the log's `fold` with `trace=True`): the microsteps name the
transitions taken and the states entered, so counts are exact (eventless `always` steps and nested initial
states included), not inferred from state values. Over a store, the threads go through the fleet machinery
(any executor). Never executes an action, never writes a log.
"""

from __future__ import annotations

import concurrent.futures
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import AgentError
from ..eventlog.fold import fold
from ..fleet import BatchContext, map_batches, read_threads, without_cyclic_gc
from .protocol import CoverageData
from .statechart import initial_edge, iter_nodes, iter_transition_ids, transition_label

__all__ = ["BatchCounts", "Coverage", "coverage_batch", "coverage_of", "coverage_of_store", "initial_edges"]

# Heat levels drawn on the chart: 0 = never, then 1..LEVELS by share of the most frequent.
LEVELS = 4


def initial_edges(definition: Mapping[str, Any]) -> dict[str, tuple[str, list[str]]]:
    """`{edge key: (compound state id, [initial target ids])}` for the initial arrows the graph draws.

    The root's is `#initial` (the engine traces it as a transition); a nested one is `#<id>:initial`
    and counts when its state is entered together with its initial target in one microstep.
    """
    root = str(definition.get("id"))
    out: dict[str, tuple[str, list[str]]] = {}
    for node in iter_nodes(definition):
        edge = initial_edge(node, root)
        if edge is not None:
            out[edge[0]] = (str(node.get("id")), edge[1])
    return out


@dataclass
class Coverage:
    """Counts over `runs` logs (`entries` entries in all); `to_pandas()` lists every state and transition.

    States and transitions that exist in the definition but were never reached are rows with count 0: the
    point of coverage is what did *not* happen.
    """

    definition: Mapping[str, Any]
    states: Counter[str] = field(default_factory=Counter)
    transitions: Counter[str] = field(default_factory=Counter)
    runs: int = 0
    entries: int = 0

    def add(self, other: Coverage) -> Coverage:
        """Sum two coverages of the same machine (a list of logs is the sum of its logs)."""
        return Coverage(
            self.definition,
            self.states + other.states,
            self.transitions + other.transitions,
            self.runs + other.runs,
            self.entries + other.entries,
        )

    __add__ = add

    def state_ids(self) -> list[str]:
        return [str(n.get("id")) for n in iter_nodes(self.definition)]

    def transition_rows(self) -> list[dict[str, Any]]:
        """Every transition of the definition (plus the initial arrows), with its count."""
        rows: list[dict[str, Any]] = []
        for key, (state_id, targets) in initial_edges(self.definition).items():
            rows.append(
                {
                    "id": key,
                    "source": state_id,
                    "event": "(initial)",
                    "label": "initial",
                    "target": ", ".join(targets),
                }
            )
        for tid, source, transition in iter_transition_ids(self.definition):
            targets = [
                str(t.get("id") if isinstance(t, Mapping) else t).removeprefix("#")
                for t in transition.get("target") or []
            ]
            rows.append(
                {
                    "id": tid,
                    "source": source,
                    "event": str(transition.get("eventType")),
                    "label": transition_label(transition),
                    "target": ", ".join(targets) or "(self, targetless)",
                }
            )
        for row in rows:
            row["count"] = self.transitions.get(row["id"], 0)
        return rows

    def never_taken(self) -> list[str]:
        """Transition ids (of the definition) no log took."""
        return [row["id"] for row in self.transition_rows() if row["count"] == 0]

    def never_entered(self) -> list[str]:
        """State ids (of the definition, the root excluded) no log entered."""
        root = str(self.definition.get("id"))
        return [s for s in self.state_ids() if s != root and self.states.get(s, 0) == 0]

    def to_pandas(self) -> Any:
        """One row per state and per transition: `kind, id, label, source, event, target, count, share`.

        `share` is the count over the most frequent of its kind (1.0 = the hottest), the heatmap's scale.
        """
        import pandas as pd

        rows: list[dict[str, Any]] = []
        for node in iter_nodes(self.definition):
            sid = str(node.get("id"))
            rows.append(
                {
                    "kind": "state",
                    "id": sid,
                    "label": str(node.get("key", sid)),
                    "source": None,
                    "event": None,
                    "target": None,
                    "count": self.states.get(sid, 0),
                }
            )
        for row in self.transition_rows():
            rows.append({"kind": "transition", **row})
        frame = pd.DataFrame(
            rows, columns=["kind", "id", "label", "source", "event", "target", "count"]
        )
        peak = frame.groupby("kind")["count"].transform("max").clip(lower=1)
        frame["share"] = frame["count"] / peak
        frame.attrs.update(runs=self.runs, entries=self.entries)
        return frame

    def to_json(self) -> CoverageData:
        """What the widget draws: counts by id, heat level 0..LEVELS per id, and the totals."""
        rows = self.transition_rows()
        states = {sid: self.states.get(sid, 0) for sid in self.state_ids()}
        transitions = {row["id"]: row["count"] for row in rows}
        return {
            "runs": self.runs,
            "entries": self.entries,
            "states": states,
            "transitions": transitions,
            "stateLevels": _levels(states),
            "transitionLevels": _levels(transitions),
            "neverTaken": [row["id"] for row in rows if row["count"] == 0],
            "neverEntered": self.never_entered(),
            "totalTransitions": len(rows),
        }

    def __repr__(self) -> str:
        rows = self.transition_rows()
        taken = sum(1 for r in rows if r["count"])
        entered = len(self.state_ids()) - 1 - len(self.never_entered())
        return (
            f"Coverage(runs={self.runs}, entries={self.entries}, transitions taken {taken}/{len(rows)}, "
            f"states entered {entered}/{len(self.state_ids()) - 1})"
        )


def _levels(counts: Mapping[str, int]) -> dict[str, int]:
    """Heat level per id: 0 for never, else 1..LEVELS by the square root of count/peak (long tails stay visible)."""
    peak = max(counts.values(), default=0)
    out: dict[str, int] = {}
    for key, count in counts.items():
        out[key] = (
            0
            if count <= 0
            else max(1, min(LEVELS, round(LEVELS * (count / peak) ** 0.5)))
        )
    return out


def coverage_of(
    machine: Any,
    logs: Sequence[Mapping[str, Any]] | Iterable[Sequence[Mapping[str, Any]]],
    *,
    check_version: bool = False,
    progress: Callable[[int], None] | None = None,
) -> Coverage:
    """Coverage of one log (a list of entries) or of several (a list of such lists), folded purely.

    `check_version=False` by default: coverage asks what *this* machine does with the recorded events,
    which is also how a log recorded under an older version is measured against today's chart.
    """
    if isinstance(logs, Sequence) and logs and isinstance(logs[0], Mapping):
        many: Iterable[Sequence[Mapping[str, Any]]] = [logs]
    else:
        many = logs  # type: ignore[assignment]
    total = Coverage(machine.definition)
    for log in many:
        total = total.add(_one(machine, log, check_version, progress))
    return total


def coverage_of_store(
    store: Any,
    machine: Any,
    *,
    thread_ids: Sequence[str] | None = None,
    executor: concurrent.futures.Executor | None = None,
    batch_size: int | None = None,
) -> Coverage:
    """Coverage of every thread of `store` whose init entry names `machine.id` (or of `thread_ids`).

    Threads of other machines are skipped, not errors: a store usually holds runs of several agents. The
    threads are folded batch by batch through the fleet machinery (`agent_explorer.fleet.map_batches`), here
    by default or on `executor` (a process pool, Dask's `Client.get_executor()`): workers reopen the store
    from its URL and import the machine by its `module:attr`, and the counts add up the same either way.
    A thread that cannot be folded stops the count with an error naming it (a heatmap with holes would lie).
    """
    total = Coverage(machine.definition)
    for _, counts in map_batches(coverage_batch, store, machine, threads=thread_ids, executor=executor,
                                 batch_size=batch_size):
        if counts.failed is not None:
            thread_id, message = counts.failed
            raise AgentError(f"coverage could not fold thread {thread_id!r}: {message}", code="coverage-failed",
                             thread_id=thread_id)
        total = total.add(Coverage(machine.definition, counts.states, counts.transitions, counts.runs, counts.entries))
    return total


@dataclass
class BatchCounts:
    """What one batch of threads adds to a coverage (no definition: only counts travel back from a worker)."""

    states: Counter[str] = field(default_factory=Counter)
    transitions: Counter[str] = field(default_factory=Counter)
    runs: int = 0
    entries: int = 0
    failed: tuple[str, str] | None = None


async def coverage_batch(context: BatchContext, thread_ids: Sequence[str]) -> BatchCounts:
    """The fleet task: one traced fold per thread of this machine in the batch, summed."""
    machine = context.machine
    counts = BatchCounts()
    with without_cyclic_gc():
        async for read in read_threads(context.store, thread_ids):
            if read.error is not None:
                counts.failed = (read.thread_id, f"{type(read.error).__name__}: {read.error}")
                return counts
            log = read.entries or []
            if not log or log[0].get("machineId") != machine.id:  # another agent's run (or none at all)
                continue
            try:
                one = _one(machine, log, False, None)
            except Exception as error:  # noqa: BLE001 - named to the caller, with its thread
                counts.failed = (read.thread_id, f"{type(error).__name__}: {error}")
                return counts
            counts.states.update(one.states)
            counts.transitions.update(one.transitions)
            counts.runs += 1
            counts.entries += one.entries
    return counts


def _one(
    machine: Any,
    log: Sequence[Mapping[str, Any]],
    check_version: bool,
    progress: Callable[[int], None] | None,
) -> Coverage:
    if not log:
        raise AgentError(
            "coverage needs logs with at least their @agent.init entry; got an empty log",
            code="empty-log",
        )
    cov = Coverage(machine.definition, runs=1, entries=len(log))
    nested = {state: (key, targets) for key, (state, targets) in initial_edges(machine.definition).items()}
    # One traced fold: the microsteps name what was entered and taken (a restored init enters nothing; usage
    # entries never transition).
    for step in fold(machine, log, check_version=check_version, trace=True):
        _count(cov, step.trace or [], nested)
        if progress is not None and step.index and step.index % 10_000 == 0:
            progress(step.index)
    return cov


def _count(
    cov: Coverage,
    trace: list[dict[str, Any]],
    nested: Mapping[str, tuple[str, list[str]]],
) -> None:
    for step in trace:
        entered = step.get("entered") or []
        cov.transitions.update(str(t) for t in step.get("transitions") or [])
        cov.states.update(str(s) for s in entered)
        if len(entered) > 1:
            here = set(entered)
            for state in entered:
                hit = nested.get(state)
                # The root's initial arrow is traced as the transition "#initial" already.
                if (
                    hit is not None
                    and hit[0] != "#initial"
                    and any(t in here for t in hit[1])
                ):
                    cov.transitions[hit[0]] += 1
