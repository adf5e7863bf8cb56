"""`agent-explorer html LOG -o FILE`: the explorer's static export (`Explorer.to_html`) from the shell.

One self-contained HTML file that opens with no server. The machine follows the same consent rule as every verb;
an existing FILE is never overwritten without `--force`, a symbolic link never written through, the page is
written whole or not at all (a temporary file renamed over FILE), and the log is only read.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import AgentError
from ..plural import plural
from .machines import resolve_machine
from .sources import load_entries, parse_source
from .terminal import terminal_safe

__all__ = ["add_html_arguments", "html_command"]


def add_html_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log", metavar="LOG")
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="FILE", help="the HTML file to write")
    parser.add_argument("--machine", metavar="MODULE:ATTR", help="the machine (default: the log's machineRef, with consent)")
    parser.add_argument("--trust-machine-ref", action="store_true",
                        help="import the machine the log names without asking")
    parser.add_argument("--start", type=int, default=None, help="first index exported (default: a window or all)")
    parser.add_argument("--stop", type=int, default=None, help="last index exported, inclusive")
    parser.add_argument("--force", action="store_true", help="replace FILE if it exists (a symbolic link is refused even so)")


def html_command(args: argparse.Namespace) -> int:
    out: Path = args.output
    if out.is_symlink():
        # A link (dangling or not) is refused even with --force, as `export` refuses one: writing through it
        # would create or replace a file elsewhere, one the user never named.
        raise AgentError(f"{terminal_safe(str(out))} is a symbolic link; name the file itself (the page is written "
                         "to a new file and renamed into place, never through a link)", code="file-exists")
    if out.exists() and not args.force:
        raise AgentError(f"{terminal_safe(str(out))} already exists; pass --force to overwrite it", code="file-exists")
    source = parse_source(args.log)
    entries = load_entries(source)
    machine = resolve_machine(entries, args.machine, trust_ref=args.trust_machine_ref)
    try:
        from ..explorer import Explorer
        from ..explorer.export import export_window
    except ImportError as error:
        raise AgentError("the static export needs the explorer: pip install 'agent-explorer[lab]'",
                         code="missing-lab") from error
    explorer = Explorer(machine, entries, thread_id=source.thread_id, verify=True)
    written = explorer.to_html(out, args.start, args.stop)
    first, last = export_window(explorer, args.start, args.stop)
    held = plural(len(entries), "entry", "entries") if (first, last) == (0, len(entries) - 1) else (
        f"indices {first:,}–{last:,} of {plural(len(entries), 'entry', 'entries', thousands=True)} (the page's slider stays inside them)")
    print(f"wrote {terminal_safe(str(written))}: {held} of {terminal_safe(source.describe())}")
    return 0
