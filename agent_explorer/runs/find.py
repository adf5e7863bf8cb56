"""`find_runs`: the threads of a store that ever entered a state, journaled an event type or hold a text.

One fold per thread (the log's `fold`, versions not checked, errors recorded) gives the snapshot after every
entry; the text criterion is `ex.search`'s own `search_log` over the entries and those contexts, so a thread
matches here exactly when searching it in the explorer finds something. Runs on the fleet path (any executor);
reads only.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.snapshot import matches_state
from ..errors import AgentError
from ..eventlog.fold import fold
from ..explorer.search import SearchQuery, search_log
from ..fleet.refs import machine_spec
from ..fleet.runner import BatchContext, map_batches, read_threads, without_cyclic_gc
from ..stores.base import EventLogStore
from .row import describe

__all__ = ["FoundBatch", "find_batch", "find_runs", "find_in_entries", "state_value"]


def state_value(machine: Any, state: str) -> Any:
    """The state value `state` names: a dotted path from the root ("working.search"), a top-level key, or a
    state node id ("#refunding"); an unknown state is an error (a typo would otherwise match nothing)."""
    if not isinstance(state, str) or not state:
        raise AgentError(f"state must be a non-empty str, got {state!r}", code="invalid-argument")
    if state.startswith("#"):
        try:
            path = tuple(machine.get_state_node_by_id(state[1:]).path)
        except Exception as error:  # noqa: BLE001 - the engine's own lookup error, named for this call
            raise AgentError(f"machine {machine.id!r} has no state with id {state!r}", code="unknown-state") from error
    else:
        path = tuple(state.split("."))
        node: Mapping[str, Any] = machine.definition
        for key in path:
            child = (node.get("states") or {}).get(key)
            if not isinstance(child, Mapping):
                raise AgentError(
                    f"machine {machine.id!r} has no state {state!r} (a dotted path from the root, or '#id')",
                    code="unknown-state",
                )
            node = child
    if not path:
        raise AgentError(f"{state!r} names the machine's root, which every run is in", code="invalid-argument")
    value: Any = path[-1]
    for key in reversed(path[:-1]):
        value = {key: value}
    return value


def find_in_entries(
    machine: Any,
    entries: Sequence[Mapping[str, Any]],
    *,
    state: Any = None,
    event_type: str | None = None,
    text: str | None = None,
) -> dict[str, int | None]:
    """The first index of each given criterion in one thread (None: never). `state` is a state value."""
    found: dict[str, int | None] = {}
    contexts: list[Any] = []
    state_index = event_index = None
    for step in fold(machine, entries, check_version=False, errors="record"):
        if state is not None and state_index is None and matches_state(state, step.snapshot.value):
            state_index = step.index
        if event_type is not None and event_index is None and step.event_type == event_type:
            event_index = step.index
        if text is not None:
            contexts.append(step.snapshot.context)
    if state is not None:
        found["state_index"] = state_index
    if event_type is not None:
        found["event_index"] = event_index
    if text is not None:
        hits = search_log(entries, SearchQuery(text), iter(contexts), limit=1)
        found["text_index"] = int(hits[0]) if hits else None
    return found


@dataclass
class FoundBatch:
    """One batch's matches (thread id, first indices) and the threads skipped or unreadable."""

    matches: list[tuple[str, dict[str, int | None]]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)


async def find_batch(context: BatchContext, thread_ids: Sequence[str]) -> FoundBatch:
    """The fleet task: each thread of this machine folded once against the criteria in `options`."""
    machine = context.machine
    options = context.options
    out = FoundBatch()
    with without_cyclic_gc():
        async for read in read_threads(context.store, thread_ids):
            if read.error is not None:
                out.unreadable.append((read.thread_id, describe(read.error)))
                continue
            entries = read.entries or []
            if not entries or entries[0].get("machineId") != machine.id:
                out.skipped.append(read.thread_id)
                continue
            try:
                found = find_in_entries(machine, entries, state=options.get("state"),
                                        event_type=options.get("event_type"), text=options.get("text"))
            except Exception as error:  # noqa: BLE001 - one bad thread never stops the rest
                out.unreadable.append((read.thread_id, describe(error)))
                continue
            if all(index is not None for index in found.values()):
                out.matches.append((read.thread_id, found))
    return out


def find_runs(
    store: EventLogStore | str,
    machine: Any,
    *,
    state: str | None = None,
    event_type: str | None = None,
    text: str | None = None,
    threads: Iterable[str] | None = None,
    executor: concurrent.futures.Executor | None = None,
    batch_size: int | None = None,
) -> Any:
    """Threads matching every given criterion, one row each, in thread order: a DataFrame indexed by thread_id.

    `state`: the state was active after some entry (column `state_index`, the first such index); `event_type`:
    an entry of that exact type was journaled (`event_index`); `text`: a case-insensitive substring of an
    entry's payload or of the replayed context, as `ex.search` finds it (`text_index`). Threads of another
    machine are left out; `df.attrs["skipped"]` and `df.attrs["unreadable"]` ({thread: why}) say which.
    """
    if state is None and event_type is None and text is None:
        raise AgentError("find_runs needs at least one of state=, event_type=, text=", code="invalid-argument")
    if isinstance(threads, str):
        raise AgentError("threads must be an iterable of thread ids, not one str", code="invalid-argument")
    for name, value in (("event_type", event_type), ("text", text)):
        if value is not None and (not isinstance(value, str) or not value):
            raise AgentError(f"{name} must be a non-empty str, got {value!r}", code="invalid-argument")
    spec = machine_spec(machine)
    options = {"state": state_value(spec.machine, state) if state is not None else None,
               "event_type": event_type, "text": text}
    matches: list[tuple[str, dict[str, int | None]]] = []
    skipped: list[str] = []
    unreadable: dict[str, str] = {}
    for _, batch in map_batches(find_batch, store, spec, threads=threads, executor=executor,
                                batch_size=batch_size, options=options):
        matches.extend(batch.matches)
        skipped.extend(batch.skipped)
        unreadable.update(batch.unreadable)
    import pandas as pd

    columns = [c for c, v in (("state_index", state), ("event_index", event_type), ("text_index", text))
               if v is not None]
    frame = pd.DataFrame(
        {column: pd.array([found[column] for _, found in matches], dtype="int64") for column in columns},
        index=pd.Index([thread_id for thread_id, _ in matches], name="thread_id", dtype="object"),
        columns=columns,
    )
    frame.attrs["skipped"] = skipped
    frame.attrs["unreadable"] = unreadable
    return frame
