"""Consent before import: the machine a log names (`metadata.machineRef`) is imported only when the user says so.

A ref read from a log is log text, and importing it runs that module's code. It is used when the user named the
machine (`--machine`), passed `--trust-machine-ref`, or answered yes at a prompt on a terminal; the package's own
sample machines need no consent. This module only decides which ref may be imported; it never imports one.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, TextIO

from ..errors import AgentError
from ..eventlog.machine_ref import is_sample_machine_ref, machine_ref_of, parse_machine_ref
from .terminal import terminal_safe

__all__ = ["TRUST_FLAG", "consented_machine_ref"]

TRUST_FLAG = "--trust-machine-ref"
_YES = ("y", "yes")


def consented_machine_ref(
    entries: Sequence[dict[str, Any]],
    override: str | None,
    *,
    trust_ref: bool = False,
    stdin: TextIO | None = None,
    prompt_to: TextIO | None = None,
) -> str:
    """The ref the user agreed to import for this log, or an AgentError saying how to agree (exit 2).

    `override` (from `--machine`) is the user's own choice. Otherwise the log's ref is used when it names a
    sample machine, when `trust_ref` is set, or when the user types y/yes at the prompt; the prompt is only
    shown when stdin is a terminal, so nothing is imported from a pipe, a cron job or CI without a flag.
    """
    if override is not None:
        parse_machine_ref(override)
        return override
    ref = machine_ref_of(entries)
    if ref is None:
        raise AgentError(
            "this log does not name its machine (no metadata.machineRef in its init entry); "
            "pass --machine package.module:attribute",
            code="machine-not-found",
        )
    parse_machine_ref(ref)  # a malformed ref is refused before it is shown anywhere
    if trust_ref or is_sample_machine_ref(ref):
        return ref
    stdin = sys.stdin if stdin is None else stdin
    if _is_terminal(stdin):
        if _ask(ref, stdin, sys.stderr if prompt_to is None else prompt_to):
            return ref
        raise AgentError(
            f"not importing machine {ref!r}: declined at the prompt (pass {TRUST_FLAG} or --machine {ref} to "
            "import it without asking)",
            code="untrusted-machine-ref",
        )
    raise AgentError(
        f"this log names machine {ref!r} (metadata.machineRef); importing it runs that module's code, so it needs "
        f"your consent: pass {TRUST_FLAG} (or --machine {ref})",
        code="untrusted-machine-ref",
    )


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _ask(ref: str, stdin: TextIO, out: TextIO) -> bool:
    out.write(
        f"This log names its machine {terminal_safe(ref)} (metadata.machineRef).\n"
        f"Importing it runs that module's code. Import {terminal_safe(ref)}? [y/N] "
    )
    out.flush()
    try:
        answer = stdin.readline()
    except (OSError, KeyboardInterrupt):
        answer = ""
    if not answer.endswith("\n"):
        out.write("\n")  # end of input: the next message starts on its own line
    return answer.strip().lower() in _YES
