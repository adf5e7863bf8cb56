"""The verbs of `agent-explorer`. Each takes the parsed arguments and returns an exit code.

Log text is untrusted: everything printed from an entry goes through `terminal_safe` so a payload cannot
move the cursor, recolour the terminal or forge lines.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..errors import AgentError
from .machines import resolve_machine
from .sources import copy_log, fork_thread, list_threads, load_entries, parse_source, save_entries

_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0x00, 0x20), 0x7F] if c not in (0x20,)}
_CONTROL.update({c: f"\\u{c:04x}" for c in range(0x80, 0xA0)})
_CONTROL.update({0x2028: "\\u2028", 0x2029: "\\u2029", 0x202E: "\\u202e", 0x2066: "\\u2066", 0x2067: "\\u2067",
                 0x2068: "\\u2068", 0x2069: "\\u2069", 0x202A: "\\u202a", 0x202B: "\\u202b", 0x202C: "\\u202c",
                 0x202D: "\\u202d", 0x200E: "\\u200e", 0x200F: "\\u200f"})


def terminal_safe(text: str, width: int | None = None) -> str:
    """Escape control, C1 and bidi-override characters; cut to `width` with an ellipsis."""
    text = text.translate(_CONTROL)
    if width is not None and len(text) > width:
        text = text[: max(width - 1, 0)] + "…"
    return text


def verify(args: argparse.Namespace) -> int:
    """Verify one log (--all-threads, every thread of a store, is cli/fleet.py).

    The output always says what was checked: entries, entries checked against their recorded hash, and
    entries without one (which pass unless --strict); and whether the run is finished.
    """
    from ..eventlog.report_text import hash_phrase, run_state, state_text
    from ..eventlog.verification import verify_log

    source = parse_source(args.log)
    entries = load_entries(source)
    if not entries:
        raise AgentError(
            f"{source.describe()} is an empty log: it holds no entries, so there is nothing to verify",
            code="empty-log",
        )
    machine = resolve_machine(entries, args.machine)
    progress = None if args.no_progress or args.json or not sys.stderr.isatty() else _progress_bar(len(entries))
    report = verify_log(machine, entries, strict=args.strict, progress=progress)
    if progress is not None:
        sys.stderr.write("\r" + " " * 60 + "\r")
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
            "lastState": state_text(final.get("value")),
        }, ensure_ascii=True))
        return 0 if report.ok else 1
    what = (f"{report.entries} entries of {terminal_safe(source.describe())} against machine "
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
        filled = int(30 * done / total)
        sys.stderr.write(f"\rverifying [{'#' * filled}{'.' * (30 - filled)}] {done}/{total}")
        sys.stderr.flush()

    return report


def show(args: argparse.Namespace) -> int:
    entries = load_entries(parse_source(args.log))
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
    print(f"({len(rows)} shown of {total} entries)")
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
        return f"model {event.get('model', '?')}: {usage.get('totalTokens', '?')} tokens"
    text = json.dumps(event, ensure_ascii=False, separators=(",", ":")) if event else ""
    causation = entry.get("causationId")
    return (f"caused by {causation} " if causation else "") + text


def threads(args: argparse.Namespace) -> int:
    records = list_threads(args.store, args.limit, args.offset)
    print(f"{'thread':<48}  {'entries':>8}")
    for thread_id, length in records:  # ThreadInfo rows
        print(f"{terminal_safe(thread_id, 48):<48}  {length:>8}")
    print(f"({len(records)} threads)")
    return 0


def fork(args: argparse.Namespace) -> int:
    from ..eventlog.entries import fork_event_log

    source = parse_source(args.log)
    if source.is_store:
        fork_thread(source, args.dest, args.at)
        print(f"forked {terminal_safe(source.describe())} at {args.at} onto thread {terminal_safe(args.dest)}")
        return 0
    entries = fork_event_log(load_entries(source), args.at)
    save_entries(parse_source(args.dest, thread_required=True), entries)
    print(f"wrote {len(entries)} entries to {terminal_safe(args.dest)}")
    return 0


def copy(args: argparse.Namespace) -> int:
    source = parse_source(args.source)
    dest = parse_source(args.dest)
    count = copy_log(source, dest)
    print(f"copied {count} entries from {terminal_safe(source.describe())} to {terminal_safe(dest.describe())}")
    return 0


def project_root() -> Path:
    """The checkout the package runs from (notebooks/ and sample_logs/ live beside the package)."""
    return Path(__file__).resolve().parents[2]


def free_port(preferred: int, attempts: int = 50) -> int:
    """The first port from `preferred` on that 127.0.0.1 can bind, so the URL printed is the one served."""
    for port in range(preferred, preferred + attempts):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AgentError(f"no free port in {preferred}-{preferred + attempts - 1}; pass --port", code="no-free-port")


def open_lab(args: argparse.Namespace) -> int:
    root = project_root()
    notebook = root / "notebooks" / args.notebook
    if not notebook.exists():
        raise AgentError(
            f"{notebook} not found: `open` runs from a checkout of agent_explorer (notebooks/ beside the package)",
            code="file-not-found",
        )
    samples = root / "sample_logs" / "samples.db"
    if not samples.exists():
        raise AgentError(
            f"{samples} not found; regenerate the samples with `python -m agent_explorer.samples.regenerate`",
            code="file-not-found",
        )
    try:
        import jupyterlab  # noqa: F401
    except ImportError as error:
        raise AgentError("JupyterLab is not installed: pip install 'agent-explorer[lab]'", code="missing-lab") \
            from error
    port = free_port(args.port)
    token = secrets.token_hex(16)
    command = [
        sys.executable, "-m", "jupyter", "lab",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.default_url=/lab/tree/notebooks/{args.notebook}",
    ]
    if args.no_browser or not (os.environ.get("DISPLAY") or sys.platform == "darwin"):
        command.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # containers and fresh VMs often run as root; Jupyter refuses otherwise
    url = f"http://127.0.0.1:{port}/lab/tree/notebooks/{args.notebook}?token={token}"
    print(f"Opening JupyterLab on notebooks/{args.notebook} with the sample store (Ctrl-C to stop).\n"
          f"\n    Open this URL in your browser:  {url}\n\nThen run the notebook's cells (Run > Run All Cells).",
          flush=True)
    return subprocess.call(command, cwd=root)
