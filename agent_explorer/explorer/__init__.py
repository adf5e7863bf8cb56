"""The notebook explorer: an anywidget time-travel debugger over a recorded run, plus its building blocks
(and, in explorer/runs.py, the run list of a store, `Runs`).

The only layer that imports anywidget, traitlets and graphviz; nothing below `explorer/` imports from here.
"""

from __future__ import annotations

from .branches import AppendResult, Branch, BranchComparison
from .widget import Explorer

# `Runs` lives in explorer/runs.py and is not imported here: it sits on agent_explorer.runs, which imports parts of
# this package (prices, search); `from agent_explorer import Runs` loads it.
__all__ = ["AppendResult", "Branch", "BranchComparison", "Explorer"]
