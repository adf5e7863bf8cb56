"""Write the sample logs that are generated, not committed: the 100,001-entry inbox run and the SQLite store.

`ensure_samples(dir)` makes `dir` a complete `sample_logs/` folder: the shipped logs (copied in when `dir` is not
where they live), `inbox_long.jsonl` (long_run.py's fast path, folded through the real engine) and `samples.db`
(every thread, with each entry's exact JSON text) and `triage.db` (triage.py: a few thousand support threads of mixed
fates, a store of its own so samples.db keeps the ten threads its readers count on). Deterministic and idempotent: a stamp records what the files
were made from, and when it is current nothing is written. It never edits the shipped logs where they live.

It only ever replaces a file it wrote itself: the stamp also holds a manifest, each written file's SHA-256, and a
file of one of its names whose bytes are not the ones recorded (a user's own `samples.db` with threads of theirs, a
`support_clean.jsonl` of their notes) is kept and reported (`AgentError`, code `file-exists`) unless `force`.
A `samples.db` with a non-empty `-wal` beside it holds commits its digest cannot see, so it is never provably ours.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..errors import AgentError
from ..eventlog.files import write_bytes_atomically
from ..stores.copy import export_thread_jsonl, import_thread_jsonl
from ..stores.portal import run_sync
from ..stores.sqlite import SqliteEventLogStore
from . import long_run
from .catalog import LONG_RUN_THREAD, LONG_RUN_TICKETS, SAMPLES, jsonl_name
from .shipped import GOLDEN_FILES, PACKAGE_DIR, checkout_root, shipped_sample_logs_dir, user_home
from .triage import triage_threads

__all__ = ["GENERATED_FILES", "LONG_RUN_FILE", "STAMP", "STORE_FILE", "TRIAGE_FILE", "default_sample_logs",
           "ensure_samples"]

LONG_RUN_FILE = "inbox_long.jsonl"
STORE_FILE = "samples.db"
TRIAGE_FILE = "triage.db"
GENERATED_FILES = (LONG_RUN_FILE, STORE_FILE, TRIAGE_FILE)
SQLITE_FILES = (STORE_FILE, TRIAGE_FILE)  # stores: a -wal with commits beside one means it is not as written
#: Written last, so a folder with a current stamp holds complete files.
STAMP = ".generated.json"
_LOCK = ".samples.lock"
#: Bumped when the way the files are written changes (what the stamp's key cannot see).
_FORMAT = 2
_BATCH = 5000


def default_sample_logs() -> Path:
    """The checkout's `sample_logs/` when running from one, else `sample_logs/` in the per-user folder."""
    root = checkout_root()
    return root / "sample_logs" if root is not None else user_home() / "sample_logs"


def ensure_samples(
    dir: str | os.PathLike[str] | None = None,
    *,
    force: bool = False,
    log: Callable[[str], Any] | None = None,
    tickets: int | None = None,
    source: str | os.PathLike[str] | None = None,
) -> Path:
    """Make `dir` (default: `default_sample_logs()`) hold every sample log; return it.

    Returns at once when the stamp says the generated files were made from this package's code and these
    shipped logs (and they are still there); otherwise writes them (a few seconds), each atomically, under a
    lock so two notebooks opening at once do the work once. A file it would replace that its manifest does not
    prove it wrote is kept: nothing is written and an AgentError (code `file-exists`) names it. `force` rewrites
    every file regardless, replacing such files too (`samples.db` and `triage.db` with their `-wal`/`-shm`, `inbox_long.jsonl`
    and the shipped logs' names). `source` is where the committed logs come from (default: the shipped ones);
    `tickets` shortens the long run (for tests).
    """
    out = Path(dir) if dir is not None else default_sample_logs()
    origin = Path(source) if source is not None else shipped_sample_logs_dir()
    count = LONG_RUN_TICKETS if tickets is None else tickets
    say = log if log is not None else (lambda _message: None)
    out.mkdir(parents=True, exist_ok=True)
    with _locked(out):
        stamp = _read_stamp(out)
        shipped = _shipped_to_copy(origin, out)
        fresh = not force and not shipped and _is_current(out, _key(out, count), stamp)
        if fresh:
            return out
        ours = _proven_ours(out, stamp)
        replaced = [name for name in (*shipped, *GENERATED_FILES) if _occupied(out / name)]
        foreign = [name for name in replaced if name not in ours]
        if foreign and not force:
            raise _foreign_error(out, foreign)
        written = {name: digest for name, digest in ours.items() if name not in replaced}
        for name, data in shipped.items():
            write_bytes_atomically(out / name, data)
            written[name] = hashlib.sha256(data).hexdigest()
        key = _key(out, count)
        say(f"writing the generated sample logs into {out} ({', '.join(GENERATED_FILES)}; a few seconds)")
        files = run_sync(_generate(out, count))
        written[LONG_RUN_FILE] = files[LONG_RUN_FILE]["sha256"]
        written[STORE_FILE] = _sha256(out / STORE_FILE)
        written[TRIAGE_FILE] = _sha256(out / TRIAGE_FILE)
        _write_json(out / STAMP, {"format": _FORMAT, "key": key, "tickets": count, "files": files,
                                  "written": dict(sorted(written.items()))})
    return out


# -- what the files are made from ---------------------------------------------------------------------------------


def _shipped_to_copy(origin: Path, out: Path) -> dict[str, bytes]:
    """The shipped logs `out` lacks or holds other bytes of (none when `out` is where they live)."""
    if _same_dir(origin, out):
        return {}
    wanted: dict[str, bytes] = {}
    for name in GOLDEN_FILES:
        data = (origin / name).read_bytes()
        target = out / name
        if target.is_file() and not target.is_symlink() and target.read_bytes() == data:
            continue
        wanted[name] = data
    return wanted


# -- whose files these are -----------------------------------------------------------------------------------------


def _read_stamp(out: Path) -> dict[str, Any]:
    try:
        stamp = json.loads((out / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return stamp if isinstance(stamp, dict) else {}


def _occupied(path: Path) -> bool:
    """Something of this name is there (a dangling link too: replacing it would still drop what it names). A
    store's non-empty `-wal` counts, even alone: it holds commits; an empty one and the `-shm` index hold none."""
    if path.name == STORE_FILE and _has_commits(_side(path, "-wal")):
        return True
    return path.exists() or path.is_symlink()


def _has_commits(wal: Path) -> bool:
    return wal.is_symlink() or (wal.exists() and wal.stat().st_size > 0)


def _side(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _proven_ours(out: Path, stamp: dict[str, Any]) -> dict[str, str]:
    """Name -> digest of each file in `out` the manifest proves this generator wrote (its bytes are the ones
    recorded). A stamp written before the manifest (format 1) proves the long run by its recorded digest and the
    store by holding exactly the threads and lengths it recorded."""
    recorded: dict[str, str] = {}
    manifest = stamp.get("written")
    if isinstance(manifest, dict):
        recorded = {name: digest for name, digest in manifest.items() if isinstance(digest, str)}
    files = stamp.get("files") if isinstance(stamp.get("files"), dict) else {}
    assert isinstance(files, dict)
    if not recorded and stamp.get("format") == 1:
        long_run_record = files.get(LONG_RUN_FILE)
        if isinstance(long_run_record, dict) and isinstance(long_run_record.get("sha256"), str):
            recorded[LONG_RUN_FILE] = long_run_record["sha256"]
    ours: dict[str, str] = {}
    for name in (*GOLDEN_FILES, *GENERATED_FILES):
        path = out / name
        if path.is_symlink() or not path.is_file():
            continue
        if name in SQLITE_FILES and _has_commits(_side(path, "-wal")):
            continue  # commits not yet in the main file: its digest cannot vouch for them
        digest = _sha256(path)
        if recorded.get(name) == digest:
            ours[name] = digest
        elif name == STORE_FILE and name not in recorded and stamp.get("format") == 1:
            store_record = files.get(STORE_FILE)
            threads = store_record.get("threads") if isinstance(store_record, dict) else None
            if isinstance(threads, dict) and _store_threads(path) == threads:
                ours[name] = digest
    return ours


def _store_threads(path: Path) -> dict[str, int] | None:
    """Thread id -> length of a SQLite store file, read without writing to it (None if it is not one)."""
    import sqlite3

    try:
        uri = f"file:{urllib.parse.quote(str(path.resolve()))}?mode=ro"
        with contextlib.closing(sqlite3.connect(uri, uri=True)) as conn:
            rows = conn.execute("SELECT thread_id, max(idx) + 1 FROM agent_event_log GROUP BY thread_id").fetchall()
    except sqlite3.Error:
        return None
    return {str(thread): int(length) for thread, length in rows}


def _foreign_error(out: Path, names: list[str]) -> AgentError:
    first = out / names[0]
    more = f" (and {len(names) - 1} more: {', '.join(names[1:])})" if len(names) > 1 else ""
    return AgentError(
        f"kept {first}{more}: agent-explorer did not write it (or it changed since), so nothing was written; "
        f"move it away, or pass --force to replace it with the package's",
        code="file-exists", path=str(first),
    )


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or os.path.samefile(a, b)
    except OSError:
        return False


def _key(out: Path, tickets: int) -> str:
    """What the generated files depend on: the code that folds and stores them, the committed logs, the size."""
    digest = hashlib.sha256(f"format {_FORMAT} tickets {tickets}\n".encode())
    package = PACKAGE_DIR.parent
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package)
        if relative.parts[0] in ("explorer", "cli") or "shipped" in relative.parts:
            continue  # the widget and the command line do not change what is recorded
        digest.update(str(relative).encode() + b"\0" + path.read_bytes() + b"\0")
    for name in GOLDEN_FILES:
        if name.endswith(".jsonl"):
            digest.update(name.encode() + b"\0" + (out / name).read_bytes() + b"\0")
    return digest.hexdigest()


def _is_current(out: Path, key: str, stamp: dict[str, Any]) -> bool:
    if stamp.get("key") != key or not isinstance(stamp.get("files"), dict):
        return False
    for name in GENERATED_FILES:
        recorded = stamp["files"].get(name)
        path = out / name
        if not isinstance(recorded, dict) or not path.is_file():
            return False
        if name == LONG_RUN_FILE and path.stat().st_size != recorded.get("bytes"):
            return False
    return True


# -- writing them -------------------------------------------------------------------------------------------------


async def _generate(out: Path, tickets: int) -> dict[str, Any]:
    """Build the store under a temporary name (short threads from their JSONL text, then the long run), export
    the long run from it, then move both into place."""
    tag = f".tmp-{os.getpid()}"
    temp_store, temp_log = out / f".{STORE_FILE}{tag}", out / f".{LONG_RUN_FILE}{tag}"
    temp_triage = out / f".{TRIAGE_FILE}{tag}"
    _remove(temp_store, temp_log, temp_triage)
    try:
        # NORMAL: a crash leaves only a temporary file behind, which the next run removes and rewrites.
        store = SqliteEventLogStore(temp_store, synchronous="NORMAL")
        try:
            threads: dict[str, int] = {}
            for sample in SAMPLES:
                if sample.thread_id == LONG_RUN_THREAD:
                    entries = long_run.long_run_entries(tickets, sample.thread_id)
                    threads[sample.thread_id] = await _append_long_run(store, entries)
                else:
                    threads[sample.thread_id] = await import_thread_jsonl(
                        store, sample.thread_id, out / jsonl_name(sample.thread_id)
                    )
            await export_thread_jsonl(store, LONG_RUN_THREAD, temp_log)
        finally:
            await store.aclose()
        triage = await _write_triage(temp_triage, out)
        _fsync(temp_log)
        # A reader's WAL beside the old file must not be paired with the new one.
        _remove(out / f"{STORE_FILE}-wal", out / f"{STORE_FILE}-shm", out / f"{TRIAGE_FILE}-wal",
                out / f"{TRIAGE_FILE}-shm")
        os.replace(temp_store, out / STORE_FILE)
        os.replace(temp_triage, out / TRIAGE_FILE)
        os.replace(temp_log, out / LONG_RUN_FILE)
    finally:
        _remove(temp_store, temp_log, temp_triage)
    written = out / LONG_RUN_FILE
    return {
        LONG_RUN_FILE: {
            "entries": threads[LONG_RUN_THREAD],
            "bytes": written.stat().st_size,
            "sha256": _sha256(written),
        },
        STORE_FILE: {"threads": threads},
        TRIAGE_FILE: {"threads": triage},
    }


async def _write_triage(target: Path, folder: Path) -> int:
    """The triage store: every thread of triage.py, appended in batches of whole threads."""
    store = SqliteEventLogStore(target, synchronous="NORMAL")
    try:
        count = 0
        for thread_id, entries in triage_threads(folder):
            await store.append(thread_id=thread_id, expected_index=0, entries=entries)
            count += 1
        return count
    finally:
        await store.aclose()


async def _append_long_run(store: Any, entries: Iterator[dict[str, Any]]) -> int:
    written, batch = 0, []
    for entry in entries:
        batch.append(entry)
        if len(batch) == _BATCH:
            written = await store.append(thread_id=LONG_RUN_THREAD, expected_index=written, entries=batch)
            batch = []
    if batch:
        written = await store.append(thread_id=LONG_RUN_THREAD, expected_index=written, entries=batch)
    return written


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _remove(*paths: Path) -> None:
    for path in paths:
        for side in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            side.unlink(missing_ok=True)


def _fsync(path: Path) -> None:
    with path.open("rb") as handle:
        os.fsync(handle.fileno())


def _write_json(target: Path, value: Any) -> None:
    write_bytes_atomically(target, (json.dumps(value, indent=1, sort_keys=True) + "\n").encode("utf-8"))


@contextlib.contextmanager
def _locked(out: Path) -> Iterator[None]:
    """One writer per folder (an advisory lock; without fcntl, e.g. on Windows, callers must not race)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with (out / _LOCK).open("a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
