"""The front end's messages, checked once where they arrive: each kind against its shape in protocol.MESSAGES.

Why at the boundary: a message is input from a page (a stale bundle, another front end, a hand-written
`model.send`), and the panels read it as the protocol types it. Checked here with pydantic's strict mode (no
"12" for 12, no 1 for true), a bad one becomes one `AgentError` with code "invalid-widget-message" the widget
answers with an `error` message, instead of a KeyError or ValueError deep in a panel.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ..errors import AgentError
from .protocol import MESSAGES, ErrorReply

__all__ = ["error_reply", "parse_message"]

_ADAPTERS: dict[str, TypeAdapter[Any]] = {kind: TypeAdapter(shape) for kind, shape in MESSAGES.items()}


def parse_message(content: object) -> Mapping[str, Any]:
    """`content` as the protocol types it, or AgentError("invalid-widget-message") saying what is wrong."""
    if not isinstance(content, Mapping):
        raise AgentError(f"a widget message is a JSON object, not {type(content).__name__}",
                         code="invalid-widget-message")
    kind = content.get("kind")
    adapter = _ADAPTERS.get(kind) if isinstance(kind, str) else None
    if adapter is None:
        raise AgentError(f"unknown widget message kind {str(kind)[:60]!r}", code="invalid-widget-message")
    try:
        checked: Mapping[str, Any] = adapter.validate_python(dict(content), strict=True)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in issue['loc']) or 'message'}: {issue['msg']}"
            for issue in error.errors(include_url=False)[:5]
        )
        raise AgentError(f"widget message {kind!r} does not fit its shape: {problems}",
                         code="invalid-widget-message") from None
    return checked


def error_reply(error: AgentError, content: object) -> ErrorReply:
    """What the widget sends back for a message it could not take."""
    kind = content.get("kind") if isinstance(content, Mapping) else None
    return {"kind": "error", "about": str(kind)[:60] if kind is not None else None, "code": error.code,
            "message": error.message}
