"""The verbs of `agent-explorer`. Each takes the parsed arguments and returns an exit code.

Log text is untrusted: everything printed from an entry goes through `terminal_safe` so a payload cannot
move the cursor, recolour the terminal or forge lines.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import AgentError
from ..plural import plural
from .machines import resolve_machine
from .sources import copy_log, fork_thread, list_threads, load_entries, parse_source, save_entries
from .terminal import clear_bar, draw_bar
from .terminal import terminal_safe as terminal_safe  # re-exported: other verbs import it from here


def verify(args: argparse.Namespace) -> int:
    """Verify one log (--all-threads, every thread of a store, is cli/fleet.py).

    The output always says what was checked: entries, entries checked against their recorded hash, and
    entries without one (which pass unless --strict); and whether the run is finished.
    """
    from ..engine.values import value_text
    from ..eventlog.report_text import hash_phrase, run_state
    from ..eventlog.verification import verify_log

    source = parse_source(args.log)
    entries = load_entries(source)
    if not entries:
        raise AgentError(
            f"{source.describe()} is an empty log: it holds no entries, so there is nothing to verify",
            code="empty-log",
        )
    machine = resolve_machine(entries, args.machine, trust_ref=args.trust_machine_ref)
    progress = None if args.no_progress or args.json or not sys.stderr.isatty() else _progress_bar(len(entries))
    report = verify_log(machine, entries, strict=args.strict, progress=progress)
    if progress is not None:
        clear_bar()
    divergences = list(report.divergences)
    final = report.final_persisted_snapshot or {}
    unfinished = run_state(final)
    if args.json:
        shown = divergences if args.all else divergences[:1]
        print(json.dumps({
            "log": source.describe(),
            "ok": report.ok,
            "entries": report.entries,
            "checked": report.checked,
            "unverified": report.unverified,
            "strict": bool(args.strict),
            "machine": {"id": machine.id, "version": machine.version},
            "firstDivergence": report.first_divergence,
            "divergenceCount": len(divergences),
            "divergences": [_divergence_json(d) for d in shown],
            "finished": unfinished is None,
            "status": final.get("status"),
            "lastState": value_text(final.get("value")),
        }, ensure_ascii=True))
        return 0 if report.ok else 1
    what = (f"{plural(report.entries, 'entry', 'entries')} of {terminal_safe(source.describe())} against machine "
            f"{terminal_safe(machine.id)} version {terminal_safe(str(machine.version))}: "
            f"{hash_phrase(report.checked, report.unverified)}")
    if report.ok:
        if report.checked:
            print(f"ok: {what}")
        else:
            print(f"not checked: {what}; no entry carries a hash, so the fold ran without error but proves nothing "
                  "(--strict fails such a log)")
        if unfinished:
            print(terminal_safe(unfinished))
        return 0
    shown = divergences if args.all else divergences[:1]
    for d in shown:
        print(_divergence_line(d))
    more = len(divergences) - len(shown)
    if more > 0:
        print(f"… and {more} more divergent entries (--all lists them)")
    count = f"{len(divergences)} divergence" + ("" if len(divergences) == 1 else "s")
    print(f"diverges: {what}; {count}, the first at index {divergences[0].index}")
    if unfinished:
        print(terminal_safe(unfinished))
    return 1


def _divergence_json(d: Any) -> dict[str, Any]:
    return {
        "index": d.index,
        "eventId": d.event_id,
        "eventType": (d.event or {}).get("type") if isinstance(d.event, dict) else None,
        "kind": d.kind,
        "recordedHash": d.expected_hash,
        "replayedHash": d.actual_hash,
    }


def _divergence_line(d: Any) -> str:
    event_type = d.event.get("type") if isinstance(d.event, dict) else None
    return terminal_safe(
        f"divergence at index {d.index}: event {event_type!s} (id {d.event_id}), kind {d.kind}; "
        f"recorded {d.expected_hash or '-'} replayed {d.actual_hash or '-'}"
    )


def _progress_bar(total: int) -> Any:
    if total < 5000:
        return None
    step = max(total // 200, 1)

    def report(done: int) -> None:
        if done % step and done != total:
            return
        draw_bar(done, total)

    return report


def show(args: argparse.Namespace) -> int:
    source = parse_source(args.log)
    entries = load_entries(source)
    if not entries:  # the same answer verify, html and open give: an empty file is no log to show
        raise AgentError(
            f"{terminal_safe(source.describe())} is an empty log: it holds no entries, so there is nothing to show",
            code="empty-log",
        )
    rows = []
    for entry in entries[args.start:]:
        if not row_matches(entry, args.event_type, args.grep):
            continue
        rows.append(entry)
        if args.limit and len(rows) >= args.limit:
            break
    print(SHOW_HEADER)
    for entry in rows:
        print(show_row(entry))
    total = len(entries)
    print(f"({len(rows)} shown of {plural(total, 'entry', 'entries')})")
    return 0


SHOW_HEADER = f"{'index':>7}  {'recorded at':<24}  {'event type':<40}  detail"


def row_matches(entry: dict[str, Any], event_type: str | None, needle: str | None) -> bool:
    """`--type` (a trailing * matches a prefix) and `--grep` (text anywhere in the entry's JSON)."""
    actual = str((entry.get("event") or {}).get("type", ""))
    if event_type:
        if event_type.endswith("*") and not actual.startswith(event_type[:-1]):
            return False
        if not event_type.endswith("*") and actual != event_type:
            return False
    return not needle or needle in json.dumps(entry, ensure_ascii=False)


def show_row(entry: dict[str, Any]) -> str:
    """One line of `show`'s table; every field from the entry is made terminal-safe."""
    event = entry.get("event") or {}
    return (f"{entry.get('index', ''):>7}  {terminal_safe(str(entry.get('recordedAt', '')), 24):<24}  "
            f"{terminal_safe(str(event.get('type', '')), 40):<40}  {terminal_safe(_detail(entry), 70)}")


def _detail(entry: dict[str, Any]) -> str:
    event = dict(entry.get("event") or {})
    event.pop("type", None)
    if "usage" in event and isinstance(event["usage"], dict):
        usage = event["usage"]
        tokens = usage.get("totalTokens")
        spent = plural(tokens, "token") if isinstance(tokens, (int, float)) and not isinstance(tokens, bool) else "? tokens"
        return f"model {event.get('model', '?')}: {spent}"
    text = json.dumps(event, ensure_ascii=False, separators=(",", ":")) if event else ""
    causation = entry.get("causationId")
    return (f"caused by {causation} " if causation else "") + text


def threads(args: argparse.Namespace) -> int:
    records = list_threads(args.store, args.limit, args.offset)
    print(f"{'thread':<48}  {'entries':>8}")
    for thread_id, length in records:  # ThreadInfo rows
        print(f"{_thread_cell(thread_id):<48}  {length:>8}")
    print(f"({plural(len(records), 'thread')})")
    return 0


def _thread_cell(thread_id: object) -> str:
    """A listed thread id, terminal-safe; an id another program stored as a number or a BLOB (a table without
    STRICT types) is listed as what it is, since no thread id the package reads can name it."""
    if isinstance(thread_id, str):
        return terminal_safe(thread_id, 48)
    kind = {int: "integer", float: "real", bytes: "BLOB"}.get(type(thread_id), "text that is not UTF-8")
    if isinstance(thread_id, bytes):
        thread_id = bytes(thread_id)  # shown as b'...' with its bytes escaped
    return terminal_safe(f"{thread_id!r} ({kind}, not text)", 48)


def fork(args: argparse.Namespace) -> int:
    from ..eventlog.entries import fork_event_log

    source = parse_source(args.log)
    if source.is_store:
        fork_thread(source, args.dest, args.at)
        print(f"forked {terminal_safe(source.describe())} at {args.at} onto thread {terminal_safe(args.dest)}")
        return 0
    entries = fork_event_log(load_entries(source), args.at)
    save_entries(parse_source(args.dest, thread_required=True), entries)
    print(f"wrote {plural(len(entries), 'entry', 'entries')} to {terminal_safe(args.dest)}")
    return 0


def copy(args: argparse.Namespace) -> int:
    source = parse_source(args.source)
    dest = parse_source(args.dest)
    count = copy_log(source, dest)
    print(f"copied {plural(count, 'entry', 'entries')} from {terminal_safe(source.describe())} to {terminal_safe(dest.describe())}")
    return 0
