"""What a path names when it is not a regular file, in words a one-line error can use.

Opening a named pipe blocks until a writer comes, and a directory, socket or device holds no log and no
SQLite database: the command line's LOG check (cli/logpath.py) and the SQLite store's open both refuse such a
path before opening it, with the same words.
"""

from __future__ import annotations

import stat

__all__ = ["not_a_regular_file"]


def not_a_regular_file(mode: int) -> str | None:
    """None for a regular file; else what `mode` (an `st_mode`) is: "a named pipe (FIFO), which would wait...". """
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO), which would wait for a writer forever"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"
