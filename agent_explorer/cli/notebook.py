"""The small notebook `agent-explorer open LOG` writes: one code cell that opens that log in the explorer.

The log's path or URL, the thread and the machine ref enter the cell's code only as Python literals (`ascii()`:
quoted, every non-ASCII character escaped), never pasted, so a hostile file name cannot add code or hide any.
The only machine it imports is the one the user agreed to on the command line. This module writes no file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from ..errors import AgentError
from .sources import LogSource

__all__ = ["absolute_store_url", "explorer_code", "explorer_notebook", "notebook_file_name", "notebook_json"]

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_-]+")

INTRO = """\
# Explore a recorded run

Written by `agent-explorer open`. The code cell below opens the log in the explorer with the machine you named
on the command line (or agreed to import at its prompt); nothing else the log names is imported.

Run it (*Run → Run All Cells*), then scrub with the slider or the arrow keys. In later cells, `ex.index = 5` moves
the view, `ex.snapshot` is the state there, `ex.fork(at=5)` starts a what-if branch and `ex.to_html("run.html")`
writes a static copy you can send."""


def notebook_file_name(source: LogSource) -> str:
    """`explore_<stem or thread>.ipynb`, with anything but letters, digits, `-` and `_` folded to `_`."""
    raw = (source.thread_id or "") if source.is_store else (source.path.stem if source.path else "")
    stem = _UNSAFE_NAME.sub("_", raw).strip("_")[:60] or "run"
    return f"explore_{stem}.ipynb"


def absolute_store_url(url: str) -> str:
    """A `sqlite:` URL with a relative path made absolute, so the notebook finds it from its own folder."""
    from ..stores.urls import sqlite_path

    if url.lower().startswith("memory:"):
        raise AgentError(
            "a memory: store lives inside one process, so a notebook cannot open it; export the thread to a file first",
            code="invalid-argument",
        )
    if not url.lower().startswith("sqlite:"):
        return url
    path = Path(sqlite_path(url))
    if path.is_absolute():
        return url
    query = urlsplit(url).query
    return f"sqlite:///{quote(str(path.resolve()))}" + (f"?{query}" if query else "")


def explorer_code(source: LogSource, machine_ref: str, machine_path: str | None) -> str:
    """The first code cell: builds the `Explorer` for this log and displays it."""
    lines = ["import sys", ""] if machine_path is not None else []
    if source.is_store:
        assert source.store_url is not None and source.thread_id is not None
        lines += [
            "from agent_explorer import Explorer, open_store",
            "from agent_explorer.eventlog.machine_ref import import_machine",
            "",
            "# Written by `agent-explorer open`: the store and thread to open, and the machine you allowed.",
            f"STORE_URL = {ascii(absolute_store_url(source.store_url))}",
            f"THREAD = {ascii(source.thread_id)}",
            f"MACHINE = {ascii(machine_ref)}",
        ]
    else:
        assert source.path is not None
        lines += [
            "from agent_explorer import Explorer, read_log",
            "from agent_explorer.eventlog.machine_ref import import_machine",
            "",
            "# Written by `agent-explorer open`: the log to open, and the machine you allowed.",
            f"LOG = {ascii(str(source.path.resolve()))}",
            f"MACHINE = {ascii(machine_ref)}",
        ]
    if machine_path is not None:
        lines += [
            "# The folder MACHINE's module was imported from when you ran `agent-explorer open`.",
            f"MACHINE_PATH = {ascii(machine_path)}",
            "if MACHINE_PATH not in sys.path:",
            "    sys.path.insert(0, MACHINE_PATH)",
        ]
    lines.append("")
    if source.is_store:
        lines.append("ex = Explorer.from_store(open_store(STORE_URL), THREAD, import_machine(MACHINE))")
    else:
        lines.append("ex = Explorer(import_machine(MACHINE), read_log(LOG))")
    lines.append("ex")
    return "\n".join(lines)


def explorer_notebook(source: LogSource, machine_ref: str, machine_path: str | None = None) -> dict[str, Any]:
    """An nbformat-4 notebook (as JSON data) with the intro and the explorer cell, no outputs."""
    def cell(kind: str, source_text: str, number: int) -> dict[str, Any]:
        made: dict[str, Any] = {"cell_type": kind, "id": f"cell-{number}", "metadata": {}, "source": source_text}
        if kind == "code":
            made.update(execution_count=None, outputs=[])
        return made

    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "cells": [cell("markdown", INTRO, 0), cell("code", explorer_code(source, machine_ref, machine_path), 1)],
    }


def notebook_json(notebook: dict[str, Any]) -> str:
    return json.dumps(notebook, indent=1, ensure_ascii=True) + "\n"
