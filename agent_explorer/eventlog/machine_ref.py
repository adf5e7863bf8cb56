"""A log names its machine: `metadata.machineRef` ("package.module:attribute") on the init entry.

`find_machine_ref` is the writer's side (run_agent stamps it when the machine is a module attribute),
`machine_ref_of` and `import_machine` the reader's (the CLI and the samples find the machine from the log).
Importing a machine runs its module's code, and a ref read from a log is log text: it is imported only with the
user's consent (the CLI asks), except the package's own sample machines (`is_sample_machine_ref`).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import Any

from ..engine.machine import Machine
from ..errors import AgentError

__all__ = [
    "SAMPLES_PACKAGE",
    "find_machine_ref",
    "import_machine",
    "is_sample_machine_ref",
    "machine_ref_of",
    "parse_machine_ref",
]

#: The package whose machines a log may name without asking: its modules ship with agent_explorer itself.
SAMPLES_PACKAGE = "agent_explorer.samples"


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


def parse_machine_ref(ref: str) -> tuple[str, tuple[str, ...]]:
    """`"pkg.mod:attr.sub"` -> `("pkg.mod", ("attr", "sub"))`; anything else is an `invalid-machine-ref` error.

    Every part must be an ASCII identifier: a ref is often log text, and this keeps a relative import, an empty
    part, a path or a terminal escape from ever reaching `importlib` or a prompt.
    """
    if not isinstance(ref, str):
        raise AgentError(f"a machine reference must be a str, got {type(ref).__name__}", code="invalid-machine-ref")
    module_name, sep, attr = ref.partition(":")
    modules, attrs = module_name.split("."), attr.split(".")
    if not sep or not all(_identifier(part) for part in (*modules, *attrs)):
        raise AgentError(
            f"machine reference {ref!r} must look like 'package.module:attribute' (ASCII identifiers)",
            code="invalid-machine-ref",
        )
    return module_name, tuple(attrs)


def _identifier(part: str) -> bool:
    return part.isascii() and part.isidentifier()


def is_sample_machine_ref(ref: str) -> bool:
    """True for a well-formed ref into the package's own samples: `agent_explorer.samples[.module]:attr`.

    The match is by whole package path (`agent_explorer.samples_evil` or `agent_explorer.samplesx.y` are not
    samples), and a malformed ref is never a sample.
    """
    try:
        module_name, _ = parse_machine_ref(ref)
    except AgentError:
        return False
    return module_name == SAMPLES_PACKAGE or module_name.startswith(SAMPLES_PACKAGE + ".")


def import_machine(ref: str) -> Any:
    module_name, attrs = parse_machine_ref(ref)
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise AgentError(
            f"cannot import module {module_name!r} for machine {ref!r}: {error}", code="machine-not-found"
        ) from error
    target: Any = module
    for part in attrs:
        try:
            target = getattr(target, part)
        except AttributeError as error:
            raise AgentError(
                f"module {module_name!r} has no attribute {'.'.join(attrs)!r} (machine {ref!r})",
                code="machine-not-found",
            ) from error
    # An instance check, not a duck-typed one: `machine.__class__` (the Machine class itself) has every method
    # a machine has, and would fail later, mid-verb, with an AttributeError instead of this one line.
    if not isinstance(target, Machine):
        what = f"the class {target.__name__}" if isinstance(target, type) else f"a {type(target).__name__}"
        raise AgentError(f"{ref!r} is not a machine (it names {what}); name a machine built with "
                         "setup().create_machine(...)", code="machine-not-found")
    return target


def machine_ref_of(entries: Sequence[dict[str, Any]]) -> str | None:
    if not entries:
        return None
    metadata = entries[0].get("metadata") or {}
    ref = metadata.get("machineRef") if isinstance(metadata, dict) else None
    return ref if isinstance(ref, str) else None
