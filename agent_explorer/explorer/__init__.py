"""The notebook explorer: an anywidget time-travel debugger over a recorded run, plus its building blocks.

The only layer that imports anywidget, traitlets and graphviz; nothing below `explorer/` imports from here.
"""

from __future__ import annotations

from .branches import AppendResult, Branch, BranchComparison
from .widget import Explorer

__all__ = ["AppendResult", "Branch", "BranchComparison", "Explorer"]
