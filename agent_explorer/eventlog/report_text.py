"""The words a verification is reported in, shared by `agent-explorer verify` and the fleet report.

One place says what was checked (entries, entries checked against a hash, entries without one) and how a
run ended, so a single log and a whole store are told the same way. Pure text; reads nothing, imports no
layer above the log.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..engine.values import value_text

__all__ = ["hash_coverage", "hash_phrase", "run_state"]


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def hash_phrase(checked: int, unverified: int) -> str:
    """"11 checked against a hash, 1 without a hash (not checked)": what a verification could and could not check."""
    text = f"{checked:,} checked against a hash, {unverified:,} without a hash"
    return text + (" (not checked)" if unverified else "")


def hash_coverage(entries: int, checked: int, unverified: int) -> str:
    """"12 entries: 11 checked against a hash, 1 without a hash (not checked)"."""
    return f"{_count(entries, 'entry', 'entries')}: {hash_phrase(checked, unverified)}"


def run_state(persisted: Mapping[str, Any] | None) -> str | None:
    """What the fold's last state says about the run, or None when the run finished (status "done").

    A log that ends while its machine is still active is a run in progress (or one cut short): it can
    verify, but a reader must know the run is not over.
    """
    if not persisted:
        return None
    status = persisted.get("status")
    state = value_text(persisted.get("value"))
    if status == "done":
        return None
    if status == "error":
        return f"the run ended in an error: last state {state}"
    if status == "stopped":
        return f"the run was stopped: last state {state}"
    return f"the run is not finished: last state {state}"
