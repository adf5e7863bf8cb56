"""A log names its machine: `metadata.machineRef` ("package.module:attribute") on the init entry.

`find_machine_ref` is the writer's side (run_agent stamps it when the machine is a module attribute),
`machine_ref_of` and `import_machine` the reader's (the CLI and the samples find the machine from the log).
Importing a machine runs its module's code: only refs the user passed or logs they chose to open are imported.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import Any

from ..errors import AgentError

__all__ = ["find_machine_ref", "import_machine", "machine_ref_of"]


def find_machine_ref(machine: Any) -> str | None:
    """`"module:attr"` when `machine` is a top-level attribute of an importable module."""
    for name, module in list(sys.modules.items()):
        if module is None or name == "__main__" or name.startswith("_"):
            continue
        try:
            namespace = vars(module)
        except TypeError:
            continue
        for attr, value in list(namespace.items()):
            if value is machine and not attr.startswith("_"):
                return f"{name}:{attr}"
    return None


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


def machine_ref_of(entries: Sequence[dict[str, Any]]) -> str | None:
    if not entries:
        return None
    metadata = entries[0].get("metadata") or {}
    ref = metadata.get("machineRef") if isinstance(metadata, dict) else None
    return ref if isinstance(ref, str) else None
