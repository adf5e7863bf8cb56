"""Find the machine a log was recorded with: `--machine module:attr`, else the init entry's `machineRef`.

Importing a machine runs its module's code: only refs the user passed or logs they chose to open are imported.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..errors import AgentError


def import_machine(ref: str) -> Any:
    module_name, sep, attr = ref.partition(":")
    if not sep or not module_name or not attr:
        raise AgentError(
            f"machine reference {ref!r} must look like 'package.module:attribute'",
            code="invalid-machine-ref",
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise AgentError(
            f"cannot import module {module_name!r} for machine {ref!r}: {error}", code="machine-not-found"
        ) from error
    target: Any = module
    for part in attr.split("."):
        try:
            target = getattr(target, part)
        except AttributeError as error:
            raise AgentError(
                f"module {module_name!r} has no attribute {attr!r} (machine {ref!r})", code="machine-not-found"
            ) from error
    if not hasattr(target, "get_persisted_snapshot"):
        raise AgentError(f"{ref!r} is not a machine (got {type(target).__name__})", code="machine-not-found")
    return target


def machine_ref_of(entries: list[dict[str, Any]]) -> str | None:
    if not entries:
        return None
    metadata = entries[0].get("metadata") or {}
    ref = metadata.get("machineRef") if isinstance(metadata, dict) else None
    return ref if isinstance(ref, str) else None


def resolve_machine(entries: list[dict[str, Any]], override: str | None) -> Any:
    ref = override or machine_ref_of(entries)
    if ref is None:
        raise AgentError(
            "this log does not name its machine (no metadata.machineRef in its init entry); "
            "pass --machine package.module:attribute",
            code="machine-not-found",
        )
    return import_machine(ref)
