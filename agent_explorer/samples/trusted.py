"""The one way a log's machineRef is imported without asking: when it names one of this package's samples.

Notebooks that read a ref from a sample log use `sample_machine`, so a log edited to name another module raises
instead of importing it. This module never imports anything outside `agent_explorer.samples`.
"""

from __future__ import annotations

from typing import Any

from ..errors import AgentError
from ..eventlog.machine_ref import SAMPLES_PACKAGE, import_machine, is_sample_machine_ref

__all__ = ["sample_machine"]


def sample_machine(ref: str) -> Any:
    """The sample machine `ref` ("agent_explorer.samples.module:attribute") names; any other ref is refused."""
    if not is_sample_machine_ref(ref):
        raise AgentError(
            f"{ref!r} is not one of the package's sample machines ({SAMPLES_PACKAGE}.*): importing it would run "
            "code a log chose; import your machine yourself, or pass --machine on the command line",
            code="untrusted-machine-ref",
        )
    return import_machine(ref)
