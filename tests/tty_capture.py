"""Run a command with its stderr on a real pseudo-terminal, as a person at a terminal sees it: what the CLI draws
there only when stderr is a TTY (the progress bar) is captured, stdout stays a pipe."""

from __future__ import annotations

import os
import pty
import subprocess
from typing import Any


def run_on_a_tty(command: list[str], **options: Any) -> tuple[subprocess.CompletedProcess[bytes], str]:
    """The finished process (stdout captured) and everything drawn on the terminal its stderr was."""
    leader, follower = pty.openpty()
    chunks: list[bytes] = []
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=follower, **options)
        os.close(follower)
        follower = -1
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other end is closed: all of it was read
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        if follower != -1:
            os.close(follower)
        os.close(leader)
    return done, b"".join(chunks).decode("utf-8", "replace")
