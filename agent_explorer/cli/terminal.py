"""Text bound for the terminal: log text is untrusted, so it is escaped before it is printed or shown in a prompt.

Escaping and the one progress line live here; nothing here reads input or decides anything.
"""

from __future__ import annotations

import sys

__all__ = ["clear_bar", "draw_bar", "terminal_safe"]

_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0x00, 0x20), 0x7F] if c not in (0x20,)}
_CONTROL.update({c: f"\\u{c:04x}" for c in range(0x80, 0xA0)})
_CONTROL.update({0x2028: "\\u2028", 0x2029: "\\u2029", 0x202E: "\\u202e", 0x2066: "\\u2066", 0x2067: "\\u2067",
                 0x2068: "\\u2068", 0x2069: "\\u2069", 0x202A: "\\u202a", 0x202B: "\\u202b", 0x202C: "\\u202c",
                 0x202D: "\\u202d", 0x200E: "\\u200e", 0x200F: "\\u200f"})


def terminal_safe(text: str, width: int | None = None) -> str:
    """Escape control, C1 and bidi-override characters; cut to `width` with an ellipsis."""
    text = text.translate(_CONTROL)
    if width is not None and len(text) > width:
        text = text[: max(width - 1, 0)] + "…"
    return text


def draw_bar(done: int, total: int | None, unit: str = "", tail: str = "", label: str = "verifying") -> None:
    """The one progress line on stderr: `verifying [####....] 120/4,000 threads (950/s)`."""
    if total:
        filled = int(30 * min(done, total) / total)
        sys.stderr.write(f"\r{label} [{'#' * filled}{'.' * (30 - filled)}] {done:,}/{total:,}{unit}{tail}")
    else:
        sys.stderr.write(f"\r{label}: {done:,}{unit}{tail}")
    sys.stderr.flush()


def clear_bar() -> None:
    sys.stderr.write("\r" + " " * 78 + "\r")
