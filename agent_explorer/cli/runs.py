"""`agent-explorer runs STORE_URL`: a store's run list on a terminal (newest first, counts per status) or as JSON.

Rows come from `summarize_runs` (the per-user cache makes a second look cheap); `--status`/`--state` filter the
rows as `Runs.filter` does, `--entered`/`--event`/`--contains` keep what `find_runs` finds. Exit codes: 0
listed, 2 could not run (bad URL, no machine, no thread of that machine). Only reads the store.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from ..errors import AgentError
from ..plural import plural
from ..stores.portal import run_sync
from .consent import TRUST_FLAG
from .fleet import _executor, _first_look, _only_machine
from .machines import import_consented, resolve_machine_ref
from .sources import STORE_SCHEMES
from .terminal import clear_bar, draw_bar, terminal_safe

__all__ = ["add_runs_arguments", "runs_command"]


def add_runs_arguments(parser: argparse.ArgumentParser) -> None:
    from ..runs import STATUSES

    parser.add_argument("store", metavar="STORE_URL", help="sqlite:///runs.db or postgresql://user@host/db")
    parser.add_argument("--machine", metavar="MODULE:ATTR", help="the machine (default: the store's machineRef)")
    parser.add_argument(TRUST_FLAG, dest="trust_machine_ref", action="store_true",
                        help="import the machine the store's logs name without asking")
    parser.add_argument("--status", action="append", choices=STATUSES, metavar="S",
                        help=f"only runs with this status (repeatable): {', '.join(STATUSES)}")
    parser.add_argument("--state", metavar="S", help="only runs whose last state is, or is inside, S (a.b or #id)")
    parser.add_argument("--entered", metavar="S", help="only runs that were ever in state S")
    parser.add_argument("--event", metavar="TYPE", help="only runs that journaled an event of this type")
    parser.add_argument("--contains", metavar="TEXT", help="only runs with TEXT in a payload or the context")
    parser.add_argument("--limit", type=int, default=50, metavar="N", help="at most N rows (0: all; default 50)")
    parser.add_argument("--json", action="store_true", help="print the rows as a JSON array")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, metavar="N", help="fold in N worker processes on this machine")
    where.add_argument("--scheduler", metavar="ADDRESS", help="fold on a Dask cluster (tcp://host:8786)")


def runs_command(args: argparse.Namespace) -> int:
    from ..runs import find_runs, summarize_runs

    url = _store_url(args.store)
    if args.limit < 0:
        raise AgentError(f"--limit must be 0 (all) or more, got {args.limit}", code="invalid-argument")
    show_bar = not (args.no_progress or args.json) and sys.stderr.isatty()
    # Without --machine the threads' heads name it, and a store of several machines is refused (as verify
    # --all-threads does): a list of one machine's runs is never picked on a guess.
    look = run_sync(_first_look(url, heads=args.machine is None))
    head = _only_machine(look.machines) if args.machine is None else []
    total = look.threads
    ref = resolve_machine_ref(head, args.machine, trust_ref=bool(args.trust_machine_ref))
    machine = import_consented(ref)
    from ..runs.find import state_value

    for state in (args.state, args.entered):  # a typo is named now, not after the store has folded
        if state is not None:
            state_value(machine, state)
    with _executor(args) as executor:
        summaries = summarize_runs(url, ref, executor=executor, progress=_bar(total) if show_bar else None)
        if show_bar:
            clear_bar()
        if summaries.counts()["skipped"] == len(summaries) and len(summaries):
            raise AgentError(f"no thread of this store was recorded by machine {machine.id!r} "
                             f"({plural(len(summaries), 'thread')} of other machines); pass --machine", code="machine-not-found")
        rows = summaries.filtered(machine, status=args.status, state=args.state)
        if args.entered is not None or args.event is not None or args.contains is not None:
            found = find_runs(url, ref, state=args.entered, event_type=args.event, text=args.contains,
                              threads=[row.thread_id for row in rows], executor=executor)
            keep = set(found.index)
            rows = [row for row in rows if row.thread_id in keep]
    # Newest first: rows without a timestamp (unreadable) go last, in thread order.
    rows.sort(key=lambda row: row.last_recorded or "", reverse=True)
    listed = rows[: args.limit] if args.limit else rows
    if args.json:
        print(json.dumps([_json_row(row) for row in listed], ensure_ascii=True))
        return 0
    _print_table(listed)
    counts = ", ".join(f"{n:,} {status}" for status, n in summaries.counts().items() if n)
    more = f"; {len(rows) - len(listed):,} more (--limit 0 lists them)" if len(listed) < len(rows) else ""
    print(f"{plural(len(summaries), 'thread', thousands=True)}: {counts or 'none'}. Listed {len(listed):,} of {len(rows):,} matching{more}.")
    return 0


def _store_url(text: str) -> str:
    if not text.startswith(STORE_SCHEMES) or text.startswith("memory:"):
        raise AgentError(f"runs takes a STORE_URL (sqlite:///runs.db, postgresql://user@host/db), got {text!r}",
                         code="invalid-argument")
    if "#" in text:
        raise AgentError(f"{text!r} names one thread; runs lists every thread of a store (drop '#…')",
                         code="invalid-argument")
    return text


def _bar(total: int | None) -> Any:
    def report(done: int, _: int | None) -> None:
        draw_bar(done, total, " threads", label="summarizing")

    return report


def _json_row(row: Any) -> dict[str, Any]:
    data: dict[str, Any] = row.to_json()
    for key in ("first_recorded", "last_recorded"):  # ISO 8601 text as the log holds it, normalized to UTC
        data[key] = _iso(data[key])
    return data


def _iso(text: str | None) -> str | None:
    if text is None:
        return None
    from datetime import UTC, datetime

    try:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if stamp.tzinfo is None:
        return None
    return stamp.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _print_table(rows: list[Any]) -> None:
    print(f"{'thread':<32}  {'entries':>7}  {'last recorded':<20}  {'state':<28}  {'status':<10}  {'verified':<8}  "
          f"{'tokens':>8}")
    for row in rows:
        verified = {True: "yes", False: "NO", None: "-"}[row.verified]
        if row.verified is False and row.divergent_index is not None:
            verified = f"NO @{row.divergent_index}"
        state = row.state if row.status != "unreadable" else (row.error or "")
        stamp = (_iso(row.last_recorded) or "-")[:19].replace("T", " ")
        tokens = f"{row.total_tokens:,}" if not (isinstance(row.total_tokens, float) and math.isnan(row.total_tokens)) \
            else "-"
        print(f"{terminal_safe(row.thread_id, 32):<32}  {row.entries:>7}  {stamp:<20}  {terminal_safe(state, 28):<28}  "
              f"{row.status:<10}  {verified:<8}  {tokens:>8}")
