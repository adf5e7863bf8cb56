"""The log as a DataFrame: one row per entry, and with a machine the replayed state beside it, in one fold.

`log_to_pandas(entries, machine=None)`: columns from the entries themselves (`id`, `recordedAt` as a tz-aware
datetime, `type`, `causationId`, `requestId`, `model`, every numeric usage field, the recorded `stateHash`),
indexed by `index`; with a machine, one pass of the log's `fold` adds the replayed `state`, `status`, `tags`, and
`verified` / `divergent` from the same pass's hash check. Built column by column (no per-row dicts), so a
million entries stay fast. pandas is imported only when called; nothing here writes or executes anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..engine.values import value_text
from .entries import USAGE_EVENT_TYPE
from .fold import fold
from .verification import Verifier

__all__ = ["log_to_pandas"]

BASE_COLUMNS = ("id", "recordedAt", "type", "causationId", "requestId", "model")


def log_to_pandas(
    entries: Iterable[Mapping[str, Any]],
    machine: Any = None,
    *,
    verify: bool = True,
    check_version: bool = True,
    verified: Mapping[int, bool | None] | None = None,
) -> Any:
    """One row per entry, indexed by `index`; with `machine`, the replayed state columns (see the module).

    `verified`: `True` when the entry's recorded hash was checked and matched, `False` when it differs (the
    entry is `divergent`), missing (`<NA>`) when the entry carries no hash or `verify=False`. An entry the
    machine could not fold is `divergent` too (its state is the one before it). Pass `verified=` (index ->
    verdict) to reuse a verification already done (the explorer does), so the fold hashes nothing.
    """
    import pandas as pd  # lazy: the log layer must not need pandas

    columns: dict[str, list[Any]] = {name: [] for name in ("index", *BASE_COLUMNS, "stateHash")}
    usage: dict[str, list[Any]] = {}
    state: dict[str, list[Any]] = {"state": [], "status": [], "tags": [], "verified": [], "divergent": []}
    listed = entries if isinstance(entries, list) else list(entries)
    for position, entry in enumerate(listed):
        event = entry.get("event") if type(entry) is dict or isinstance(entry, Mapping) else None
        event = event if type(event) is dict or isinstance(event, Mapping) else {}
        event_type = event.get("type")
        recorded_index = entry.get("index")
        columns["index"].append(recorded_index if isinstance(recorded_index, int) else position)
        columns["id"].append(entry.get("id"))
        columns["recordedAt"].append(entry.get("recordedAt"))
        columns["type"].append(event_type)
        columns["causationId"].append(entry.get("causationId"))
        is_usage = event_type == USAGE_EVENT_TYPE
        columns["requestId"].append(event.get("requestId") if is_usage else None)
        columns["model"].append(event.get("model") if is_usage else None)
        verification = entry.get("verification")
        columns["stateHash"].append(verification.get("stateHash") if isinstance(verification, Mapping) else None)
        if is_usage and isinstance(event.get("usage"), Mapping):
            for key, value in event["usage"].items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    values = usage.get(key)
                    if values is None:
                        values = usage[key] = [None] * position  # a field first seen here: earlier rows have none
                    values.append(value)
            for values in usage.values():
                if len(values) == position:
                    values.append(None)
        elif usage:
            for values in usage.values():
                values.append(None)
    if machine is not None:
        _replayed(machine, listed, state, verify=verify, check_version=check_version, verified=verified)
    frame = pd.DataFrame({name: values for name, values in columns.items() if name != "index"},
                         index=pd.Index(columns["index"], name="index"))
    frame["recordedAt"] = pd.to_datetime(frame["recordedAt"], utc=True, format="ISO8601")
    for key, values in usage.items():
        frame[key] = pd.array(values, dtype="Float64" if any(isinstance(v, float) for v in values) else "Int64")
    if machine is not None:
        frame["state"] = state["state"]
        frame["status"] = state["status"]
        frame["tags"] = state["tags"]
        frame["verified"] = pd.array(state["verified"], dtype="boolean")
        frame["divergent"] = state["divergent"]
    return frame


def _replayed(
    machine: Any, entries: list[Mapping[str, Any]], out: dict[str, list[Any]], *, verify: bool,
    check_version: bool, verified: Mapping[int, bool | None] | None,
) -> None:
    """The state columns, from one fold (with the hash check in the same pass unless `verified` is given)."""
    checker = Verifier(machine) if verify and verified is None else None
    text = ""
    value: Any = object()
    for step in fold(machine, entries, check_version=check_version, errors="record"):
        snapshot = step.snapshot
        if step.changed or step.index == 0:
            if snapshot.value is not value:  # an unchanged value object reads the same: keep its text
                value = snapshot.value
                text = value_text(value)
        out["state"].append(text)
        out["status"].append(snapshot.status)
        out["tags"].append(tuple(sorted(snapshot.tags)) if snapshot.tags else ())
        if checker is not None:
            before = len(checker.divergences)
            checked = checker.checked
            checker.check(step)
            found = checker.divergences[before:]
            bad = any(d.kind in ("state", "exception") for d in found)
            out["verified"].append(False if bad else (True if checker.checked > checked else None))
            out["divergent"].append(bool(found))
        else:
            verdict = verified.get(step.index) if verified is not None else None
            out["verified"].append(verdict)
            out["divergent"].append(verdict is False or step.error is not None)
