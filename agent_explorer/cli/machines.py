"""Find the machine a log was recorded with: `--machine module:attr`, else the init entry's `machineRef`.

The log's ref is imported only with the user's consent (consent.py), the same rule for every verb. A ref the user
agreed to is found in the current folder too, but that folder goes LAST on the import path: consenting to
`my_agent:agent` must not also let a `pandas.py`, `graphviz.py` or `agent_explorer/` lying beside it shadow the
installed module (in this process, and in fleet workers, which inherit `sys.path`). The generated notebook does
the same with the machine's folder.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

from ..eventlog.machine_ref import import_machine, is_sample_machine_ref
from .consent import consented_machine_ref

__all__ = ["import_consented", "resolve_machine", "resolve_machine_ref"]


def resolve_machine_ref(entries: Sequence[dict[str, Any]], override: str | None, *, trust_ref: bool = False) -> str:
    """The ref to import for this log (asking on a terminal when the log names a module that is not a sample)."""
    return consented_machine_ref(entries, override, trust_ref=trust_ref)


def resolve_machine(entries: Sequence[dict[str, Any]], override: str | None, *, trust_ref: bool = False) -> Any:
    return import_consented(resolve_machine_ref(entries, override, trust_ref=trust_ref))


def import_consented(ref: str) -> Any:
    """Import a ref the user agreed to, finding modules in the current folder too (a user's `my_agent.py`), after
    every installed module: the folder is appended, never put first."""
    if not is_sample_machine_ref(ref):
        cwd = os.getcwd()
        if cwd not in sys.path and "" not in sys.path:
            sys.path.append(cwd)
    return import_machine(ref)
