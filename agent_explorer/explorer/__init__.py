"""The notebook explorer: an anywidget time-travel debugger over a recorded run, the run list of a
store (`Runs`), plus their building blocks.

The only layer that imports anywidget, traitlets and graphviz; nothing below `explorer/` imports from here.
"""

from __future__ import annotations

from .branches import AppendResult, Branch, BranchComparison
from .runs import Runs
from .widget import Explorer

__all__ = ["AppendResult", "Branch", "BranchComparison", "Explorer", "Runs"]
