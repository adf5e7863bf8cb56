"""The explorer's panels: small controllers, each owning its traitlets and the messages it answers.

The `Explorer` widget only lists them (`Explorer.PANELS`): each gets the explorer's session (session.py) and a
`Traits` handle limited to its own traitlets, subscribes to the session's events and asks the session for what it
wants done. No panel holds another panel or a callback into the widget (tests/explorer/test_session.py checks).
"""

from __future__ import annotations

from .base import Panel, Traits

__all__ = ["Panel", "Traits"]
