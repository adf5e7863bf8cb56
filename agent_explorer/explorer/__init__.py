"""The notebook explorer: an anywidget time-travel debugger over a recorded run, plus its building blocks
(and, in explorer/runs.py, the run list of a store, `Runs`).

The only layer that imports anywidget, traitlets and graphviz, and only in `widget.py` and `graph.py`: the
analysis modules beside them (search, branches, usage, coverage, pending, table...) import with the core
dependencies alone, so a server can read a store's usage without Jupyter. That is why `Explorer` is loaded on
first use (PEP 562 `__getattr__`) rather than here: importing `agent_explorer.explorer.usage` runs this file first.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .branches import AppendResult, Branch, BranchComparison

if TYPE_CHECKING:
    from .widget import Explorer

# Names whose module needs the [lab] extra, by the module that defines them.
_LAZY = {"Explorer": ".widget"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value


# `Runs` lives in explorer/runs.py and is not imported here: it sits on agent_explorer.runs, which imports parts of
# this package (prices, search); `from agent_explorer import Runs` loads it.
__all__ = ["AppendResult", "Branch", "BranchComparison", "Explorer"]
