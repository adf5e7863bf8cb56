"""`agent-explorer open [LOG]`: JupyterLab on the sample notebooks, or on a small notebook written for LOG.

With no LOG it serves the notebooks and sample logs (a checkout's own, or copies the installed package writes
into a per-user folder or `--dir`), generating the big samples first. With LOG it first reads and folds the whole
log as `verify` does (a truncated, reordered or garbled log, or a machine of another version, is one line and
exit 2 before anything starts; a divergence is only noted: the explorer is where it is shown),
then writes `explore_<name>.ipynb` into `--dir`, or reopens the one already there as it is (it is the user's
now; `--force` rewrites it); the machine is the one the user agreed to import.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import AgentError
from ..eventlog.files import write_bytes_atomically
from ..plural import plural
from .lab import check_port, require_lab, serve_notebook
from .machines import import_consented, resolve_machine_ref
from .notebook import absolute_store_url, explorer_notebook, notebook_file_name, notebook_json
from .sources import LogSource, load_entries, parse_source
from .terminal import terminal_safe

__all__ = ["add_open_arguments", "open_command", "write_log_notebook", "write_sample_workspace"]

_COPIES = ".notebooks.json"


def add_open_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log", metavar="LOG", nargs="?", help="a JSONL/JSON file or STORE_URL#thread (default: the samples)")
    parser.add_argument("--machine", metavar="MODULE:ATTR", help="the machine (default: the log's machineRef, with consent)")
    parser.add_argument("--trust-machine-ref", action="store_true",
                        help="import the machine the log names without asking")
    parser.add_argument("--dir", type=Path, default=None,
                        help="where to write: LOG's notebook (default: the current folder), or the samples' "
                             "notebooks/ and sample_logs/ (default: the checkout, else a per-user folder)")
    parser.add_argument("--force", action="store_true",
                        help="LOG: rewrite its notebook (else an existing one is reopened as it is); no LOG: replace "
                             "sample notebooks you edited and sample-log files of the package's names that "
                             "agent-explorer did not write (see: agent-explorer samples --help)")
    parser.add_argument("--port", type=int, default=8888)
    parser.add_argument("--no-browser", action="store_true", help="print the URL instead of opening a browser")
    parser.add_argument("--notebook", default="01_explore_a_run.ipynb", help="sample notebook to open (no LOG)")


def open_command(args: argparse.Namespace) -> int:
    require_lab()
    check_port(args.port)  # before any notebook is written
    if args.log is None:
        if args.machine is not None:
            raise AgentError("--machine needs a LOG: agent-explorer open LOG --machine MODULE:ATTR", code="invalid-argument")
        root, notebook = write_sample_workspace(args.dir, args.notebook, force=args.force)
        what = f"the sample notebook {notebook} in {root}"
    else:
        root = (args.dir or Path.cwd()).resolve()
        path = write_log_notebook(args.log, root, machine=args.machine, trust_ref=args.trust_machine_ref,
                                  force=args.force, reopen=True)
        notebook = PurePosixPath(path.name)
        what = f"{path}"
    return serve_notebook(root, notebook, port=args.port, no_browser=args.no_browser, what=terminal_safe(what))


# -- open LOG ------------------------------------------------------------------------------------------------------


def write_log_notebook(
    log: str, directory: Path, *, machine: str | None = None, trust_ref: bool = False, force: bool = False,
    reopen: bool = False,
) -> Path:
    """Write the notebook that opens `log`; return its path. The whole log is read first with verify's checks
    and the machine imported (with consent), so a damaged log or a wrong ref fails now, on one line, rather than
    in the notebook. An existing notebook is never overwritten without `force`: with `reopen` its path is
    returned as it is (the user may have edited it), else it is an error (code `file-exists`)."""
    source = parse_source(log)
    if source.is_store:
        assert source.store_url is not None
        absolute_store_url(source.store_url)  # memory: cannot be opened from a notebook: say so before anything
    entries = load_entries(source)  # truncated, reordered, garbled: the same one-line error verify gives
    if not entries:
        raise AgentError(f"{source.path} is an empty log: it holds no entries, so there is nothing to open",
                         code="empty-log")
    ref = resolve_machine_ref(entries[:1], machine, trust_ref=trust_ref)
    _check_fold(import_consented(ref), entries, source)
    target = directory / notebook_file_name(source)
    if (target.exists() or target.is_symlink()) and not force:
        if reopen:
            print(f"reopening your notebook {terminal_safe(str(target))} as it is (--force rewrites it)", flush=True)
            return target
        raise AgentError(f"{target} already exists; pass --force to overwrite it (or --dir to write elsewhere)",
                         code="file-exists")
    directory.mkdir(parents=True, exist_ok=True)
    text = notebook_json(explorer_notebook(source, ref, _machine_path(ref)))
    write_bytes_atomically(target, text.encode("utf-8"))
    return target


def _check_fold(machine: Any, entries: list[dict[str, Any]], source: LogSource) -> None:
    """Fold the log as `verify` does, so what would stop the explorer (a machine of another version, an entry
    the machine cannot take) is verify's one-line error now. A divergence is not an error here: showing where a
    run diverged is what the explorer is for, so it is only said."""
    from ..eventlog.verification import verify_log

    if len(entries) >= 5000:
        print(f"checking {plural(len(entries), 'entry', 'entries')} before opening them (as verify does)", file=sys.stderr, flush=True)
    report = verify_log(machine, entries)
    if not report.ok:
        print(f"note: {terminal_safe(_described(source))} diverges from machine {terminal_safe(str(machine.id))} "
              f"at index {report.first_divergence}; the explorer shows where", flush=True)


def _described(source: LogSource) -> str:
    if source.is_store:
        from ..stores.urls import redact_url

        return f"{redact_url(source.store_url or '')}#{source.thread_id}"
    return str(source.path)


def _machine_path(ref: str) -> str | None:
    """The current folder, when the machine's top-level module came from it (the kernel runs from --dir)."""
    top = sys.modules.get(ref.partition(":")[0].split(".")[0])
    origin = getattr(getattr(top, "__spec__", None), "origin", None)
    if not origin:
        return None
    location = Path(origin).resolve().parent
    if getattr(top, "__path__", None) is not None:  # a package: its folder's parent is on sys.path
        location = location.parent
    cwd = Path.cwd().resolve()
    return str(cwd) if location == cwd else None


# -- open (the samples) --------------------------------------------------------------------------------------------


def write_sample_workspace(directory: Path | None, notebook: str, *, force: bool = False) -> tuple[Path, PurePosixPath]:
    """The folder to serve and the notebook in it: the checkout itself, or notebooks/ and sample_logs/ copied
    from the package into `directory` (default: the per-user folder). The big samples are generated either way.

    A copied notebook is refreshed when the package's changes, unless you edited it (then it is kept and
    reported; `force` replaces it).
    """
    from ..samples import ensure_samples
    from ..samples.shipped import NOTEBOOKS, checkout_root, shipped_notebooks_dir, user_home

    if notebook not in NOTEBOOKS and f"{notebook}.ipynb" in NOTEBOOKS:
        notebook += ".ipynb"  # `--notebook 03_postmortem`, as the README names the notebooks
    if notebook not in NOTEBOOKS:
        raise AgentError(f"no sample notebook {notebook!r}; choose one of {', '.join(NOTEBOOKS)}", code="invalid-argument")
    checkout = checkout_root()
    if directory is None and checkout is not None:
        ensure_samples(checkout / "sample_logs", force=force, log=print)
        return checkout, PurePosixPath("notebooks", notebook)
    root = (directory if directory is not None else user_home()).resolve()
    (root / "notebooks").mkdir(parents=True, exist_ok=True)
    _copy_notebooks(shipped_notebooks_dir(), root / "notebooks", NOTEBOOKS, force=force)
    ensure_samples(root / "sample_logs", force=force, log=print)
    return root, PurePosixPath("notebooks", notebook)


def _copy_notebooks(origin: Path, target: Path, names: tuple[str, ...], *, force: bool) -> None:
    record_path = target / _COPIES
    try:
        written: dict[str, Any] = json.loads(record_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        written = {}
    for name in names:
        data = (origin / name).read_bytes()
        path = target / name
        if path.exists():
            current = hashlib.sha256(path.read_bytes()).hexdigest()
            if current == hashlib.sha256(data).hexdigest():
                written[name] = current
                continue
            if not force and written.get(name) != current:
                print(f"keeping your edited {terminal_safe(str(path))} (--force replaces it with the package's)")
                continue
        write_bytes_atomically(path, data)
        written[name] = hashlib.sha256(data).hexdigest()
    write_bytes_atomically(record_path, (json.dumps(written, indent=1, sort_keys=True) + "\n").encode("utf-8"))
