"""A state value for people: one line (`working.drafting | monitor.idle`). Pure; no engine state read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["value_text"]


def value_text(value: Any) -> str:
    """A state value as one line: `working.drafting | monitor.idle` (regions joined by ` | `)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        parts = []
        for key, sub in value.items():
            inner = value_text(sub)
            if isinstance(sub, Mapping) and len(sub) > 1:
                inner = "(" + inner + ")"
            parts.append(f"{key}.{inner}" if inner else str(key))
        return " | ".join(parts)
    return str(value)
