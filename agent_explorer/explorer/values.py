"""Small readings of engine output for the widget: the transitions a trace took, a change path as segments.
Pure functions over plain data; no engine, no I/O. (A state value as one line is `engine.values.value_text`.)"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["path_segments", "taken_ids"]


def path_segments(path: Any) -> list[str | int]:
    """Normalise a change path (list, tuple, or `context.items[3].name` text) to a list of segments.

    The widget highlights the JSON tree by comparing segment lists, so the form `diff_snapshots` picks for
    its paths must not matter here.
    """
    if isinstance(path, (list, tuple)):
        return [p if isinstance(p, int) else str(p) for p in path]
    text = str(path)
    if text.startswith("/"):  # JSON Pointer
        return [_pointer_segment(p) for p in text[1:].split("/")] if text != "/" else []
    out: list[str | int] = []
    for part in text.replace("]", "").replace("[", ".").split("."):
        if part == "":
            continue
        out.append(int(part) if part.isdigit() else part)
    return out


def _pointer_segment(part: str) -> str | int:
    part = part.replace("~1", "/").replace("~0", "~")
    return int(part) if part.isdigit() else part


def taken_ids(steps: Sequence[Any] | None) -> list[str]:
    """Ids of the transitions a trace's microsteps took (`{transitions: [...]}` dicts or objects), first
    occurrence order, each once."""
    taken: list[str] = []
    for step in steps or []:
        transitions = step.get("transitions") if isinstance(step, Mapping) else getattr(step, "transitions", None)
        for t in transitions or []:
            tid = t.get("id") if isinstance(t, Mapping) else t
            if tid is not None and str(tid) not in taken:
                taken.append(str(tid))
    return taken
