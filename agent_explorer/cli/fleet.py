"""`agent-explorer verify STORE_URL --all-threads`: every thread of a store against one machine, as a deploy gate.

Exit codes: 0 every checked thread verifies, 1 some thread diverges or could not be verified, 2 the run could
not happen (bad URL, no machine, nothing to check). The machine is the one the user names (`--machine`); a
store's `machineRef` is only used with consent (`--trust-machine-ref`). Only reads the store.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import json
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from ..errors import AgentError
from ..stores.portal import run_sync
from .machines import import_consented, resolve_machine_ref
from .sources import STORE_SCHEMES, open_cli_store
from .terminal import clear_bar, draw_bar

__all__ = ["refuse_fleet_flags", "verify_fleet"]

_FLEET_FLAGS = ("workers", "scheduler", "ignore_version", "junit", "batch_size")


def refuse_fleet_flags(args: argparse.Namespace) -> None:
    """Fleet flags on a single log are a mistake worth naming, not something to ignore."""
    given = [name for name in _FLEET_FLAGS if getattr(args, name, None) not in (None, False)]
    if given:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        raise AgentError(f"{flags} only apply with --all-threads (verify every thread of a STORE_URL)",
                         code="invalid-argument")


def verify_fleet(args: argparse.Namespace) -> int:
    from ..fleet import verify_store

    if getattr(args, "follow", False):
        raise AgentError("--follow follows one thread as it grows; --all-threads verifies every thread as stored now",
                         code="invalid-argument")
    url = _store_url(args.log)
    show_bar = not (args.no_progress or args.json) and sys.stderr.isatty()
    # A first look with a short connect timeout: an unreachable database fails in seconds, on one line. It also
    # reads the first thread's head (the machine, when --machine is not given) and, for the bar, the thread count.
    head, total = run_sync(_first_look(url, count=show_bar))
    # The ref is imported as every verb imports one: with consent, and finding the user's own modules in the
    # current folder (worker processes start with this process's import path).
    machine = resolve_machine_ref(head, args.machine, trust_ref=bool(getattr(args, "trust_machine_ref", False)))
    import_consented(machine)
    with _executor(args) as executor:
        report = verify_store(
            url, machine, executor=executor, ignore_version=args.ignore_version, strict=args.strict,
            progress=_progress_bar(total) if show_bar else None,
            **({"batch_size": args.batch_size} if args.batch_size else {}),
        )
    if show_bar:
        clear_bar()
    if args.junit:
        report.to_junit(args.junit)
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=True))
    else:
        _print_text(report, list_all=args.all)
        if args.junit:
            print(f"JUnit report: {args.junit}")
    if report.divergent or report.errors:
        return 1
    if report.threads_checked == 0:
        print("agent-explorer: nothing was verified: no thread of this store was recorded by machine "
              f"{report.machine_id!r}", file=sys.stderr)
        return 2
    return 0


def _print_text(report: Any, *, list_all: bool, limit: int = 20) -> None:
    from .commands import terminal_safe

    print(terminal_safe(report.summary()))
    problems = report.problem_lines()
    shown = problems if list_all else problems[:limit]
    for line in shown:
        print(terminal_safe(line, 300))
    if len(problems) > len(shown):
        print(f"… and {len(problems) - len(shown)} more threads (--all lists them)")


def _store_url(text: str) -> str:
    if not text.startswith(STORE_SCHEMES) or text.startswith("memory:"):
        raise AgentError(
            f"--all-threads takes a STORE_URL (sqlite:///runs.db, postgresql://user@host/db), got {text!r}",
            code="invalid-argument",
        )
    if "#" in text:
        raise AgentError(
            f"{text!r} names one thread; --all-threads verifies every thread of the store (drop '#…', or drop "
            "--all-threads to verify that one thread)",
            code="invalid-argument",
        )
    return text


async def _first_look(url: str, *, count: bool) -> tuple[list[dict[str, Any]], int | None]:
    """The first thread's head entry (none when the store is empty) and, when asked, how many threads there are."""
    from ..fleet.runner import PAGE_SIZE

    store = open_cli_store(url)
    try:
        page = await store.list_threads(limit=PAGE_SIZE)
        head = await _first_readable_head(store, page)
        total: int | None = None
        if count:
            total, offset = len(page), len(page)
            while len(page) == PAGE_SIZE:
                page = await store.list_threads(limit=PAGE_SIZE, offset=offset)
                total, offset = total + len(page), offset + len(page)
        return head, total
    finally:
        await store.aclose()


async def _first_readable_head(store: Any, page: list[Any]) -> list[dict[str, Any]]:
    """The head entry of the first thread that reads: one a foreign writer broke (a NUL or a number for its id,
    a garbled row) is left to the run, which reports it as an error row, instead of stopping the whole run."""
    for info in page:
        try:
            head = list(await store.read(info.thread_id, 0, 1))
        except AgentError:
            continue
        if head:
            return head
    return []


@contextlib.contextmanager
def _executor(args: argparse.Namespace) -> Iterator[concurrent.futures.Executor | None]:
    if args.workers is not None:
        if args.workers < 1:
            raise AgentError(f"--workers must be at least 1, got {args.workers}", code="invalid-argument")
        # Fresh interpreters (not fork): this process already runs store threads, which fork would copy mid-lock.
        context = multiprocessing.get_context("forkserver" if "forkserver" in multiprocessing.get_all_start_methods()
                                              else "spawn")
        with concurrent.futures.ProcessPoolExecutor(args.workers, mp_context=context) as pool:
            yield pool
        return
    if args.scheduler is not None:
        try:
            import distributed  # untyped; used through Any below
        except ImportError as error:
            raise AgentError("--scheduler needs Dask: pip install 'agent-explorer[fleet]'",
                             code="missing-dependency") from error
        try:
            dask: Any = distributed
            client = dask.Client(args.scheduler, timeout=float(os.environ.get("AGENT_EXPLORER_DB_TIMEOUT", "10")))
        except OSError as error:
            raise AgentError(f"cannot reach the Dask scheduler at {args.scheduler}: {error}",
                             code="invalid-argument") from error
        with client:
            yield client.get_executor()
        return
    yield None


def _progress_bar(total: int | None) -> Callable[[int, int | None], None]:
    started = time.perf_counter()

    def report(done: int, _: int | None) -> None:
        rate = done / max(time.perf_counter() - started, 1e-9)
        draw_bar(done, total, " threads", f" ({rate:,.0f}/s)")

    return report
