"""`agent-explorer samples [--dir DIR]`: write the sample logs that are generated rather than shipped.

A thin verb over `agent_explorer.samples.ensure_samples`: deterministic, and a no-op when the files are current.
It writes only into that one sample_logs folder, and replaces there only files it wrote itself (a manifest of
their digests proves it); a user's file of the same name is kept and named, exit 2, unless --force.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .terminal import terminal_safe

__all__ = ["add_samples_arguments", "samples_command"]


def add_samples_arguments(parser: argparse.ArgumentParser) -> None:
    from ..samples.generate import GENERATED_FILES, SQLITE_FILES
    from ..samples.shipped import GOLDEN_FILES

    generated = ", ".join(f"{name} (with its -wal and -shm)" if name in SQLITE_FILES else name for name in GENERATED_FILES)
    parser.add_argument("--dir", type=Path, default=None,
                        help="the sample_logs folder to write (default: the checkout's, else a per-user folder)")
    parser.add_argument("--force", action="store_true",
                        help="rewrite every sample file even when current, replacing files of these names in DIR "
                             f"that agent-explorer did not write: {generated} and, when DIR is not the checkout's "
                             f"sample_logs/, the shipped logs ({', '.join(GOLDEN_FILES)})")


def samples_command(args: argparse.Namespace) -> int:
    from ..samples import ensure_samples

    out = ensure_samples(args.dir, force=args.force, log=lambda message: print(terminal_safe(message), file=sys.stderr))
    print(terminal_safe(str(out)))
    return 0
