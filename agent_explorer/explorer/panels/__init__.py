"""The explorer's panels: small controllers, each owning its traitlets and the messages it answers.

The `Explorer` widget only wires them: it declares the traitlets (each written by exactly one panel, through a
`Traits` handle limited to its names), routes each message kind to the one panel that handles it, and passes
every panel its dependencies explicitly (the shared `View`, and the few other panels it calls).
"""

from __future__ import annotations

from .base import Panel, Traits, View

__all__ = ["Panel", "Traits", "View"]
