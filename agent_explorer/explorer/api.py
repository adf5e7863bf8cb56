"""Late lookup of the package's public names (shared/API.md), and JSON safety for what goes to the browser.

The explorer sits on top of every other layer; looking names up when first needed keeps
`import agent_explorer.explorer` cheap and independent of import order. Never imports a layer eagerly.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

from ..errors import AgentError

__all__ = ["api", "jsonable"]

_API_HOMES = (
    "agent_explorer",
    "agent_explorer.log",
    "agent_explorer.engine",
    "agent_explorer.runtime",
    "agent_explorer.steps",
)
# Where the names are defined, tried only when no package re-exports them yet (the layers land separately).
_DEFINING_MODULES = (
    "agent_explorer.log.timeline",
    "agent_explorer.log.diff",
    "agent_explorer.log.verification",
    "agent_explorer.log.entries",
    "agent_explorer.canonical.jcs",
    "agent_explorer.log.usage",
    "agent_explorer.runtime.parse",
)


def api(name: str) -> Any:
    """A public name of shared/API.md (`Timeline`, `diff_snapshots`, ...), looked up when first needed.

    Late lookup keeps `import agent_explorer.explorer` cheap and independent of import order; the
    top-level package is the contract, the layer packages are where the names live.
    """
    for home in _API_HOMES:
        found = getattr(importlib.import_module(home), name, None)
        if found is not None:
            return found
    for module in _DEFINING_MODULES:
        try:
            found = getattr(importlib.import_module(module), name, None)
        except ImportError:
            continue
        if found is not None:
            return found
    raise AgentError(
        f"agent_explorer.{name} is not available in this installation",
        code="missing-dependency",
    )


def jsonable(value: Any) -> Any:
    """Round-trip through JSON with `str` for anything exotic: frames must never fail to serialise."""
    return (
        json.loads(json.dumps(value, default=str, allow_nan=False))
        if value is not None
        else None
    )
