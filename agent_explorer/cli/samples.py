"""`agent-explorer samples [--dir DIR]`: write the sample logs that are generated rather than shipped.

A thin verb over `agent_explorer.samples.ensure_samples`: deterministic, and a no-op when the files are current.
It writes only into that one sample_logs folder.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .terminal import terminal_safe

__all__ = ["add_samples_arguments", "samples_command"]


def add_samples_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dir", type=Path, default=None,
                        help="the sample_logs folder to write (default: the checkout's, else a per-user folder)")
    parser.add_argument("--force", action="store_true", help="write the generated files even when they are current")


def samples_command(args: argparse.Namespace) -> int:
    from ..samples import ensure_samples

    out = ensure_samples(args.dir, force=args.force, log=lambda message: print(terminal_safe(message), file=sys.stderr))
    print(terminal_safe(str(out)))
    return 0
