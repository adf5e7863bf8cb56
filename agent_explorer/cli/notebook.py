"""The small notebook `agent-explorer open LOG` writes: one code cell that opens that log in the explorer.

The log's path or URL, the thread and the machine ref enter the cell's code only as Python literals (`ascii()`:
quoted, every non-ASCII character escaped), never pasted, so a hostile file name cannot add code or hide any.
The only machine it imports is the one the user agreed to on the command line. This module writes no file.

The cell is written so that running it neither writes to what it opens nor imports what lies beside it:
- it first drops the kernel's own folder (and `''`) from `sys.path`: the kernel starts in the notebook's folder,
  often the log's, and a module planted there (`agent_explorer/`, `pandas.py`) would otherwise be imported in place
  of the real one. The folder of a machine the user agreed to is added back last, after the package's imports;
- it opens a store read-only (SQLite `mode=ro`; PostgreSQL in read-only transactions), as the CLI's reads do:
  forks stay in memory, and `branch.save` needs a store opened for writing;
- a PostgreSQL URL goes in without its password: libpq reads it from PGPASSWORD or ~/.pgpass.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from ..errors import AgentError
from .sources import LogSource

__all__ = [
    "absolute_store_url",
    "explorer_code",
    "explorer_notebook",
    "notebook_file_name",
    "notebook_json",
    "without_password",
]

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


def without_password(url: str) -> str:
    """A PostgreSQL URL with no password in it (neither `user:pw@` nor `?password=`): what a notebook may hold."""
    if not url.lower().startswith(("postgresql:", "postgres:")):
        return url
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}@{host}"
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    query = urlencode([(key, value) for key, value in pairs if key.lower() != "password"]) if pairs else parts.query
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


_SAFE_PATH = [
    "# Before any import: the kernel runs in this notebook's folder with it (and '') first on sys.path, so a",
    "# module planted beside a log (agent_explorer/, pandas.py) would be imported instead of the real one.",
    "import os",
    "import sys",
    "",
    "_here = os.path.realpath(os.getcwd())",
    "sys.path[:] = [p for p in sys.path if p not in ('', '.') and os.path.realpath(p) != _here]",
    "",
]


def explorer_code(source: LogSource, machine_ref: str, machine_path: str | None) -> str:
    """The first code cell: clears the import path, builds the `Explorer` for this log and displays it."""
    lines = list(_SAFE_PATH)
    if source.is_store:
        assert source.store_url is not None and source.thread_id is not None
        url = without_password(absolute_store_url(source.store_url))
        lines += [
            "from agent_explorer import Explorer, open_store",
            "from agent_explorer.eventlog.machine_ref import import_machine",
            "",
            "# Written by `agent-explorer open`: the store and thread to open, and the machine you allowed.",
            f"STORE_URL = {ascii(url)}",
            f"THREAD = {ascii(source.thread_id)}",
            f"MACHINE = {ascii(machine_ref)}",
        ]
        if url.lower().startswith(("postgresql:", "postgres:")):
            lines += ["# No password here: libpq reads it from the PGPASSWORD environment variable or ~/.pgpass."]
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
            "# The folder MACHINE's module was imported from when you ran `agent-explorer open`: added back last,",
            "# after the package's own imports, so nothing there shadows an installed module.",
            f"MACHINE_PATH = {ascii(machine_path)}",
            "if MACHINE_PATH not in sys.path:",
            "    sys.path.append(MACHINE_PATH)",
        ]
    lines.append("")
    if source.is_store:
        lines += [
            "# Opened read-only: exploring never writes to the store (forks stay in memory; to save one,",
            "# branch.save(store=open_store(STORE_URL)) with a store opened for writing).",
            f"store = open_store(STORE_URL, {_read_only_options(url)})",
            "ex = Explorer.from_store(store, THREAD, import_machine(MACHINE))",
        ]
    else:
        lines.append("ex = Explorer(import_machine(MACHINE), read_log(LOG))")
    lines.append("ex")
    return "\n".join(lines)


def _read_only_options(url: str) -> str:
    """The `open_store` keywords that open `url`'s store without writing to it."""
    if url.lower().startswith("sqlite:"):
        return "read_only=True"
    # PostgreSQL: no schema or table is created, and the session refuses every write.
    return "migrate=False, connect_kwargs={'options': '-c default_transaction_read_only=on'}"


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
