"""`verify --follow` and `show --follow`: follow a store thread as a host appends to it.

Entries arrive through `store.watch`; verification grows one verifying `Timeline` (`extend` per batch:
the fold checks each new entry once), so nothing is ever refolded from 0. The store is opened read-only where the backend allows it: following
never writes to what it follows. Every line printed from an entry goes through `terminal_safe`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..errors import AgentError
from ..plural import plural
from .commands import SHOW_HEADER, _divergence_json, _divergence_line, row_matches, show_row, terminal_safe
from .machines import resolve_machine
from .sources import LogSource, open_cli_store, parse_source

__all__ = ["verify_follow", "show_follow", "FollowedVerification", "EXIT_INTERRUPTED"]

T = TypeVar("T")
EXIT_INTERRUPTED = 130  # 128 + SIGINT, the shell's convention for a run stopped by Ctrl-C


def _store_source(text: str) -> LogSource:
    source = parse_source(text)
    if not source.is_store:
        raise AgentError(
            f"--follow follows a thread in a store: give STORE_URL#thread (e.g. sqlite:///runs.db#session-1), not the file {text!r}",
            code="invalid-argument",
        )
    return source


def _run_until_interrupted(coro: Coroutine[Any, Any, int], on_interrupt: Callable[[], int]) -> int:
    """Run the follow loop; Ctrl-C cancels it (the store and its watcher close on the way out)."""
    try:
        return asyncio.run(coro)
    except KeyboardInterrupt:
        return on_interrupt()


def _say(text: str) -> None:
    print(text, flush=True)


def _status_line(text: str) -> None:
    """Where the follower is, on stderr (stdout carries only the table, divergences and the summary)."""
    print(f"agent-explorer: {text}", file=sys.stderr, flush=True)


# --- verify --follow ---------------------------------------------------------------------------------


@dataclass
class FollowedVerification:
    """What `verify --follow` has checked so far (the summary printed however it ends)."""

    source: str
    entries: int = 0
    checked: int = 0
    unverified: int = 0
    divergences: list[Any] = field(default_factory=list)
    status: str | None = None

    @property
    def ok(self) -> bool:
        return not self.divergences

    def counts(self) -> str:
        return (f"{plural(self.entries, 'entry', 'entries')} of {terminal_safe(self.source)} checked "
                f"({plural(self.checked, 'hash', 'hashes')} compared, "
                f"{self.unverified} without a hash)")

    def to_json(self, interrupted: bool) -> str:
        return json.dumps({
            "log": self.source, "ok": self.ok, "entries": self.entries, "checked": self.checked,
            "unverified": self.unverified, "status": self.status, "interrupted": interrupted,
            "firstDivergence": self.divergences[0].index if self.divergences else None,
            "divergenceCount": len(self.divergences),
            "divergences": [_divergence_json(d) for d in self.divergences],
        }, ensure_ascii=True)


def verify_follow(args: argparse.Namespace) -> int:
    source = _store_source(args.log)
    progress = FollowedVerification(source.describe())

    def interrupted() -> int:
        if args.json:
            _say(progress.to_json(interrupted=True))
        else:
            count = len(progress.divergences)
            verdict = "no divergence" if progress.ok else f"{count} divergent {'entry' if count == 1 else 'entries'}"
            _say(f"interrupted: {progress.counts()}; {verdict}; the run is still {progress.status or 'not started'}")
        return EXIT_INTERRUPTED if progress.ok else 1

    return _run_until_interrupted(_verify_follow(source, args, progress), interrupted)


async def _verify_follow(source: LogSource, args: argparse.Namespace, progress: FollowedVerification) -> int:
    from ..eventlog.timeline import Timeline

    store = open_cli_store(source.store_url or "")
    try:
        _status_line(f"following {terminal_safe(source.describe())} (Ctrl-C to stop)")
        timeline: Timeline | None = None
        async for batch in store.watch(source.thread_id, from_index=0):
            first = timeline is None
            if timeline is None:
                machine = resolve_machine(batch, args.machine, trust_ref=args.trust_machine_ref)  # consent.py decides
                # One verifying fold that grows with the thread: each batch is folded and checked once.
                timeline = Timeline(machine, batch, verify="strict" if args.strict else True)
            else:
                timeline.extend(batch)
            report = timeline.verification
            progress.entries, progress.checked, progress.unverified = report.entries, report.checked, report.unverified
            for divergence in report.divergences[len(progress.divergences):]:
                progress.divergences.append(divergence)
                _say(json.dumps({"divergence": _divergence_json(divergence)}, ensure_ascii=True) if args.json
                     else _divergence_line(divergence))
            progress.status = timeline.state_at(len(timeline) - 1).status
            if progress.status != "active":
                break
            if first:
                _status_line(f"caught up: {plural(progress.entries, 'entry', 'entries')} verified; waiting for appends")
    finally:
        await store.aclose()
    if args.json:
        _say(progress.to_json(interrupted=False))
    elif progress.ok:
        _say(f"ok: {progress.counts()}; they replay to their recorded hashes and the run ended (status {progress.status})")
    else:
        count = len(progress.divergences)
        _say(f"diverged: {count} divergent {'entry' if count == 1 else 'entries'}; {progress.counts()}; "
             f"the run ended (status {progress.status})")
    return 0 if progress.ok else 1


# --- show --follow -----------------------------------------------------------------------------------


def show_follow(args: argparse.Namespace) -> int:
    source = _store_source(args.log)
    seen = {"shown": 0, "entries": 0}

    def interrupted() -> int:
        _say(f"({seen['shown']} shown of {plural(seen['entries'], 'entry', 'entries')}; stopped following)")
        return 0

    return _run_until_interrupted(_show_follow(source, args, seen), interrupted)


async def _show_follow(source: LogSource, args: argparse.Namespace, seen: dict[str, int]) -> int:
    store = open_cli_store(source.store_url or "")
    try:
        backlog_end = await store.length(source.thread_id)
        start = max(args.start, 0)
        _say(SHOW_HEADER)
        _status_line(f"following {terminal_safe(source.describe())} (Ctrl-C to stop)")
        async for batch in store.watch(source.thread_id, from_index=start):
            seen["entries"] = batch[-1]["index"] + 1
            if batch[0]["index"] < backlog_end <= seen["entries"]:
                _status_line(f"caught up at {plural(backlog_end, 'entry', 'entries')}; waiting for appends")
            old = [e for e in batch if e["index"] < backlog_end and row_matches(e, args.event_type, args.grep)]
            new = [e for e in batch if e["index"] >= backlog_end and row_matches(e, args.event_type, args.grep)]
            if old:
                # What was there before: the last --limit rows, like `tail -f`.
                hidden = len(old) - args.limit if args.limit and len(old) > args.limit else 0
                if hidden:
                    _say(f"(… {hidden} earlier matching entries not shown)")
                for entry in old[hidden:]:
                    _say(show_row(entry))
                seen["shown"] += len(old) - hidden
            for entry in new:
                _say(show_row(entry))
            seen["shown"] += len(new)
    finally:
        await store.aclose()
    return 0
