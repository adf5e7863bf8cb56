"""Find the machine a log was recorded with: `--machine module:attr`, else the init entry's `machineRef`."""

from __future__ import annotations

from typing import Any

from ..errors import AgentError
from ..eventlog.machine_ref import import_machine, machine_ref_of


def resolve_machine(entries: list[dict[str, Any]], override: str | None) -> Any:
    ref = override or machine_ref_of(entries)
    if ref is None:
        raise AgentError(
            "this log does not name its machine (no metadata.machineRef in its init entry); "
            "pass --machine package.module:attribute",
            code="machine-not-found",
        )
    return import_machine(ref)
