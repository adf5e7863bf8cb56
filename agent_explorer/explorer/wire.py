"""JSON safety for what goes to the browser: a frame or a table page must never fail to serialise."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["jsonable"]

def jsonable(value: Any) -> Any:
    """Round-trip through JSON with `str` for anything exotic: frames must never fail to serialise."""
    return (
        json.loads(json.dumps(value, default=str, allow_nan=False))
        if value is not None
        else None
    )
