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
from dataclasses import dataclass, field
from typing import Any

from ..errors import AgentError
from ..eventlog.machine_ref import machine_ref_of, parse_machine_ref
from ..stores.portal import run_sync
from ..stores.urls import redact_url
from .machines import import_consented, resolve_machine_ref
from .sources import STORE_SCHEMES, open_cli_store
from .terminal import clear_bar, draw_bar, terminal_safe

__all__ = ["refuse_fleet_flags", "verify_fleet"]

_FLEET_FLAGS = ("workers", "scheduler", "ignore_version", "junit", "batch_size")


def refuse_fleet_flags(args: argparse.Namespace) -> None:
    """Fleet flags on a single log are a mistake worth naming, not something to ignore."""
    given = [name for name in _FLEET_FLAGS if getattr(args, name, None) not in (None, False)]
    if given:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        raise AgentError(f"{flags} only apply with --all-threads (verify every thread of a STORE_URL)",
                         code="invalid-argument")


def _check_junit_path(path: str) -> None:
    """Before any work: a `--junit` link (dangling or not) is refused, as `html -o` and `export` refuse one; writing
    through it would create or replace a file the user never named. A regular file is replaced (a CI re-run)."""
    if os.path.islink(path):
        raise AgentError(f"--junit {terminal_safe(path)} is a symbolic link; name the report file itself (it is "
                         "written to a new file and renamed into place, never through a link)", code="file-exists")
    if os.path.isdir(path):
        raise AgentError(f"--junit {terminal_safe(path)} is a directory; name the report file", code="invalid-argument")


def verify_fleet(args: argparse.Namespace) -> int:
    from ..fleet import verify_store

    if getattr(args, "follow", False):
        raise AgentError("--follow follows one thread as it grows; --all-threads verifies every thread as stored now",
                         code="invalid-argument")
    url = _store_url(args.log)
    if args.junit:
        _check_junit_path(args.junit)
    show_bar = not (args.no_progress or args.json) and sys.stderr.isatty()
    # A first look with a short connect timeout: an unreachable database fails in seconds, on one line. It counts
    # the threads (for the bar) and, when --machine is not given, reads every thread's head to learn which
    # machines recorded them: a gate never guesses one machine for a store that holds several.
    look = run_sync(_first_look(url, heads=args.machine is None))
    head = _only_machine(look.machines) if args.machine is None else []
    # The ref is imported as every verb imports one: with consent, and finding the user's own modules in the
    # current folder (worker processes start with this process's import path).
    machine = resolve_machine_ref(head, args.machine, trust_ref=bool(getattr(args, "trust_machine_ref", False)))
    import_consented(machine)
    with _executor(args) as executor:
        report = verify_store(
            url, machine, executor=executor, ignore_version=args.ignore_version, strict=args.strict,
            progress=_progress_bar(look.threads) if show_bar else None,
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
            print(f"JUnit report: {terminal_safe(args.junit)}")
    if report.divergent or report.errors:
        return 1
    if report.threads_checked == 0:
        print("agent-explorer: nothing was verified: no thread of this store was recorded by machine "
              f"{report.machine_id!r}", file=sys.stderr)
        return 2
    return 0


def _print_text(report: Any, *, list_all: bool, limit: int = 20) -> None:
    print(terminal_safe(report.summary()))
    problems = report.problem_lines()
    shown = problems if list_all else problems[:limit]
    for line in shown:
        print(terminal_safe(line))  # whole: a reason cut mid-sentence tells the user less than none
    if len(problems) > len(shown):
        print(f"… and {len(problems) - len(shown)} more threads (--all lists them)")


def _store_url(text: str) -> str:
    if not text.startswith(STORE_SCHEMES) or text.startswith("memory:"):
        raise AgentError(
            f"--all-threads takes a STORE_URL (sqlite:///runs.db, postgresql://user@host/db), got {redact_url(text)!r}",
            code="invalid-argument",
        )
    if "#" in text:
        raise AgentError(
            f"{redact_url(text)!r} names one thread; --all-threads verifies every thread of the store (drop '#…', or drop "
            "--all-threads to verify that one thread)",
            code="invalid-argument",
        )
    return text


@dataclass
class _FirstLook:
    """What the first pass over a store found: how many threads, and (when asked) the machines their heads name."""

    threads: int = 0
    machines: dict[str, _Machine] = field(default_factory=dict)
    unreadable: BaseException | None = None


@dataclass
class _Machine:
    """One machine id the threads' init entries name: how many threads, and one head entry naming it."""

    threads: int
    head: list[dict[str, Any]]


async def _first_look(url: str, *, heads: bool) -> _FirstLook:
    """Page through the thread ids (ids only); with `heads`, read each thread's init entry and group them by the
    machine id it records. A head that cannot be read is left out here: the verification reports it as an
    error row."""
    from ..fleet.runner import PAGE_SIZE

    look = _FirstLook()
    store = open_cli_store(url)
    try:
        offset = 0
        while True:
            page = await store.list_threads(limit=PAGE_SIZE, offset=offset)
            look.threads, offset = look.threads + len(page), offset + len(page)
            for info in page if heads else ():
                try:
                    head = list(await store.read(info.thread_id, 0, 1))
                except Exception as error:  # noqa: BLE001 - a malformed row stays one thread's error row, later
                    look.unreadable = look.unreadable or error
                    continue
                machine_id = head[0].get("machineId") if head and isinstance(head[0], dict) else None
                if not isinstance(machine_id, str):
                    continue
                seen = look.machines.setdefault(machine_id, _Machine(0, head))
                seen.threads += 1
            if len(page) < PAGE_SIZE:
                if not look.machines and look.unreadable is not None:
                    raise look.unreadable  # no head could be read at all: the store's own failure, said as is
                return look
    finally:
        await store.aclose()


def _only_machine(machines: dict[str, _Machine]) -> list[dict[str, Any]]:
    """The head entry of the one machine the store's threads name; refused (exit 2) when they name several.

    Choosing one of several would check its threads, skip the rest and exit 0: a gate that passes on a guess.
    """
    if len(machines) <= 1:
        return next(iter(machines.values())).head if machines else []
    ranked = sorted(machines.items(), key=lambda item: (-item[1].threads, item[0]))
    listed = ", ".join(f"{terminal_safe(repr(name), 80)} ({_threads(seen.threads)}{_ref_note(seen.head)})"
                       for name, seen in ranked)
    raise AgentError(
        f"the threads of this store were recorded by {len(machines)} machines: {listed}; pass --machine "
        "module:attr to choose one (the threads of the others are skipped and counted)",
        code="invalid-argument",
    )


def _threads(count: int) -> str:
    return f"{count:,} thread" + ("" if count == 1 else "s")


def _ref_note(head: list[dict[str, Any]]) -> str:
    """`, machineRef pkg.mod:attr` when the head names a well-formed ref (ASCII identifiers only: it is log text)."""
    ref = machine_ref_of(head)
    try:
        parse_machine_ref(ref or "")
    except AgentError:
        return ""
    return f", machineRef {ref}"


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
        except (OSError, ValueError, TypeError) as error:  # ValueError/TypeError: an address Dask cannot parse
            raise AgentError(f"cannot reach the Dask scheduler at {terminal_safe(args.scheduler)}: "
                             f"{terminal_safe(str(error))} (the address looks like tcp://host:8786)",
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
