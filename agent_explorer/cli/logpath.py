"""What a LOG path on the command line may name: a regular file, or this process's standard input.

Opening a named pipe (a FIFO) for reading blocks until some process opens it for writing, so `verify f.jsonl` on
a FIFO nobody writes to would hang forever; a device or a socket is no log either. Such a path is refused before
it is opened, with one line. A pipe the user means is still read: `-` and `/dev/stdin` (and the `/dev/fd/N` a
shell's `<(...)` hands over) name a descriptor this process already holds, so opening them never waits for a
writer. A URL is refused by its text: `Path("http://host/x")` would collapse the `//` and report a missing file.
A missing LOG that reads as libpq's keyword form (`host=db password=…`) is named as such, its password masked:
the message would otherwise print the password the user pasted.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import AgentError
from ..filekinds import not_a_regular_file
from ..stores.urls import redact_url
from .terminal import terminal_safe

__all__ = ["STDIN", "log_path", "require_log_file"]

STDIN = "-"
"""The LOG argument that reads the log from standard input."""

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
# libpq's keyword form ("host=db user=app password=secret#t"): what a user pastes from a PostgreSQL config.
_CONNINFO = re.compile(r"^\s*(host|hostaddr|port|dbname|user|password|service|sslmode)\s*=", re.IGNORECASE)
# Paths naming a descriptor this process already has open (Linux and the BSDs/macOS spell them alike).
_OPEN_DESCRIPTORS = ("/dev/stdin", "/dev/fd/", "/proc/self/fd/")


def log_path(text: str) -> Path:
    """The path a LOG argument names; a URL that is not a store URL is refused (`-` stays `-`: as a destination
    it is a file name, and only `require_log_file` reads it as standard input)."""
    if _URL.match(text):
        scheme = text.split(":", 1)[0]
        raise AgentError(
            f"{terminal_safe(text)}: {terminal_safe(scheme)}:// URLs are not supported as logs; download the log to "
            "a file, pipe it in (LOG '-'), or name a store (sqlite:///runs.db#thread, postgresql://…#thread)",
            code="invalid-argument",
        )
    return Path(text)


def require_log_file(path: Path) -> Path:
    """The path to open for reading the log `path` names (`-`: standard input); else one line (exit 2).

    A missing path is `file-not-found`; a directory, FIFO, socket or device is `invalid-argument`, unless the path
    names one of this process's own open descriptors (stdin piped in, `<(...)`).
    """
    if str(path) == STDIN:
        path = Path("/dev/stdin")
    try:
        mode = path.stat().st_mode  # follows links: what matters is what a read would open
    except FileNotFoundError:
        text = redact_url(str(path))  # never echo a password the user put on the command line
        if _CONNINFO.match(str(path)):
            raise AgentError(
                f"{terminal_safe(text)}: a libpq connection string is not a LOG; name the store by URL: "
                "postgresql://user@host:port/db#thread (the password from PGPASSWORD or ~/.pgpass)",
                code="invalid-argument",
            ) from None
        raise AgentError(f"no such log file: {terminal_safe(text)}", code="file-not-found") from None
    kind = not_a_regular_file(mode)
    if kind is None or _names_an_open_descriptor(path):
        return path
    raise AgentError(
        f"{terminal_safe(str(path))} is {kind}, not a log file; a log is a regular file (to read a pipe, "
        "pass LOG '-' and redirect it to standard input)",
        code="invalid-argument",
    )


def _names_an_open_descriptor(path: Path) -> bool:
    text = os.path.normpath(str(path))
    return text == "/dev/stdin" or text.startswith(_OPEN_DESCRIPTORS[1:])

