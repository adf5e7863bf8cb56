"""`agent-explorer`: verify, show, fork and move recorded runs; open the explorer.

Every failure a user can cause (a missing file, a garbled log, an unknown machine, an unreachable database)
ends as one line on stderr and a non-zero exit, never a traceback. Exit codes: 0 success, 1 the log does
not verify, 2 bad input or environment.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence

from ..errors import AgentError
from . import commands
from .html import add_html_arguments, html_command
from .open import add_open_arguments, open_command
from .runs import add_runs_arguments, runs_command
from .samples import add_samples_arguments, samples_command

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent-explorer",
        description="Open, scrub, verify and rewrite recorded runs of statechart-driven agents.",
        epilog="LOG is a JSONL/JSON file or STORE_URL#thread (sqlite:///runs.db#t, postgresql://…#t).",
    )
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    verify = verbs.add_parser("verify", help="replay a log (or every thread of a store) and check each stateHash")
    verify.add_argument("log", metavar="LOG", help="a log, or with --all-threads a STORE_URL")
    verify.add_argument("--machine", metavar="MODULE:ATTR", help="the machine (default: the log's machineRef)")
    verify.add_argument("--trust-machine-ref", action="store_true",
                        help="import the machine the log names without asking")
    verify.add_argument("--strict", action="store_true", help="require a stateHash on every entry")
    verify.add_argument("--all", action="store_true", help="list every divergence, not only the first")
    verify.add_argument("--json", action="store_true", help="print a JSON report (for CI)")
    verify.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    verify.add_argument("--follow", action="store_true",
                        help="STORE_URL#thread: verify entries as they are appended, print each divergence at once; "
                             "exit when the run ends (0 ok, 1 diverged) or on Ctrl-C (130, or 1 if it diverged)")
    fleet = verify.add_argument_group("every thread of a store (LOG is a STORE_URL)")
    fleet.add_argument("--all-threads", action="store_true", help="verify every thread of the store")
    where = fleet.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, metavar="N", help="in N worker processes on this machine")
    where.add_argument("--scheduler", metavar="ADDRESS", help="on a Dask cluster (tcp://host:8786)")
    fleet.add_argument("--ignore-version", action="store_true",
                       help="fold threads recorded under another version of the machine instead of refusing them")
    fleet.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report (one test case per thread)")
    fleet.add_argument("--batch-size", type=int, metavar="N",
                       help="threads per worker task (default: ~4 tasks per worker, at most 500)")
    verify.set_defaults(run=_fleet_or(_followable(commands.verify, "verify_follow")))

    show = verbs.add_parser("show", help="print a log as a table")
    show.add_argument("log", metavar="LOG")
    show.add_argument("--type", dest="event_type", help="only events of this type (a trailing * matches a prefix)")
    show.add_argument("--grep", help="only entries whose JSON contains this text")
    show.add_argument("--from", dest="start", type=int, default=0, help="first index to show")
    show.add_argument("--limit", type=int, default=50, help="at most this many rows (0: all)")
    show.add_argument("--follow", action="store_true",
                      help="STORE_URL#thread: show the last --limit rows, then each new row as it is appended (Ctrl-C stops)")
    show.set_defaults(run=_followable(commands.show, "show_follow"))

    runs = verbs.add_parser("runs", help="list a store's runs: state, status, verified, tokens; newest first")
    add_runs_arguments(runs)
    runs.set_defaults(run=runs_command)

    threads = verbs.add_parser("threads", help="list the threads of a store with their lengths")
    threads.add_argument("--store", required=True, metavar="URL")
    threads.add_argument("--limit", type=int, default=100)
    threads.add_argument("--offset", type=int, default=0)
    threads.set_defaults(run=commands.threads)

    fork = verbs.add_parser("fork", help="copy the prefix [0, AT) of a log to a new thread or file")
    fork.add_argument("log", metavar="LOG")
    fork.add_argument("dest", metavar="DEST", help="new thread id (for a store LOG) or new file")
    fork.add_argument("--at", type=int, required=True, help="entries before this index are kept")
    fork.set_defaults(run=commands.fork)

    for name, text in (("export", "copy a log to a file or another store"), ("import", "same as export")):
        move = verbs.add_parser(name, help=text)
        move.add_argument("source", metavar="SOURCE", help="file or STORE_URL#thread")
        move.add_argument("dest", metavar="DEST", help="new file or STORE_URL#new-thread")
        move.set_defaults(run=commands.copy)

    for name in ("open", "lab"):
        lab = verbs.add_parser(name, help="open JupyterLab on a notebook for LOG, or on the sample notebooks")
        add_open_arguments(lab)
        lab.set_defaults(run=open_command)

    html = verbs.add_parser("html", help="write the explorer's static HTML export of a log")
    add_html_arguments(html)
    html.set_defaults(run=html_command)

    samples = verbs.add_parser("samples", help="write the generated sample logs (the long run, the sample store)")
    add_samples_arguments(samples)
    samples.set_defaults(run=samples_command)
    for sub in verbs.choices.values():
        sub.set_defaults(verb_parser=sub)  # a stray flag is reported with the verb's usage, not the top level's
    return parser


def _fleet_or(verb: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """`--all-threads` runs the fleet verification in cli/fleet.py (imported only then); without it, the fleet's
    own flags are refused rather than ignored."""

    def run(args: argparse.Namespace) -> int:
        from . import fleet

        if getattr(args, "all_threads", False):
            return fleet.verify_fleet(args)
        fleet.refuse_fleet_flags(args)
        return verb(args)

    return run


def _followable(verb: Callable[[argparse.Namespace], int], follower: str) -> Callable[[argparse.Namespace], int]:
    """`--follow` runs the verb's live twin in cli/follow.py (imported only then)."""

    def run(args: argparse.Namespace) -> int:
        if getattr(args, "follow", False):
            from . import follow

            return int(getattr(follow, follower)(args))
        return verb(args)

    return run


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, stray = parser.parse_known_args(argv)
    if stray:
        getattr(args, "verb_parser", parser).error(f"unrecognized arguments: {' '.join(stray)}")
    # Driver retries log warnings per attempt; the CLI reports the outcome once, on one line.
    driver_log = logging.getLogger("psycopg")
    driver_log.addHandler(logging.NullHandler())
    driver_log.propagate = False
    try:
        return int(args.run(args) or 0)
    except AgentError as error:
        print(f"agent-explorer: error [{error.code}]: {error.message}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"agent-explorer: error: {error.strerror or error}: {error.filename or ''}".rstrip(": "),
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("agent-explorer: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
