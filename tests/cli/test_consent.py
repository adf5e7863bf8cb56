"""Consent before import: a machineRef named by a log runs code only when the user says so.

The log names a harmless module written by the test that leaves a marker file when imported. Without consent it is
never imported (the marker stays absent, the module stays out of sys.modules); `--machine`, `--trust-machine-ref`
or a yes typed at a real pseudo-terminal's prompt import it. The package's own sample machines need no consent.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_explorer import write_log
from agent_explorer.cli import main
from agent_explorer.errors import AgentError
from agent_explorer.eventlog.machine_ref import is_sample_machine_ref, parse_machine_ref

from .test_cli import MACHINE_MODULE, record

MODULE = "consent_marker_machine"
REF = f"{MODULE}:counter"


def marker_module(directory: Path) -> Path:
    """Write the side-effecting machine module into `directory`; return where its marker will appear."""
    marker = directory / "IMPORTED"
    (directory / f"{MODULE}.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('imported')\n" + MACHINE_MODULE, encoding="utf-8"
    )
    return marker


@pytest.fixture
def untrusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    """(log, marker): a log whose init entry names the marker module, importable from tmp_path."""
    import importlib

    marker = marker_module(tmp_path)
    # The run is recorded with the same machine from a module without the side effect.
    (tmp_path / "consent_recorder.py").write_text(MACHINE_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    recorder = importlib.import_module("consent_recorder")
    log = tmp_path / "untrusted.jsonl"
    write_log(log, record(recorder.counter, [{"type": "INC"}, {"type": "STOP"}], ref=REF))
    monkeypatch.setattr(sys, "stdin", io.StringIO("yes\n"))  # an answer is there, but stdin is not a terminal
    yield log, marker
    sys.modules.pop(MODULE, None)
    sys.modules.pop("consent_recorder", None)


def test_a_log_named_module_is_not_imported_without_consent(untrusted: tuple[Path, Path], capsys: Any) -> None:
    log, marker = untrusted
    assert main(["verify", str(log)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and REF in err and "--trust-machine-ref" in err and "untrusted-machine-ref" in err
    assert not marker.exists() and MODULE not in sys.modules


@pytest.mark.parametrize("flags", [["--trust-machine-ref"], ["--machine", REF]], ids=["trust-flag", "machine-flag"])
def test_consent_by_flag_imports_it(untrusted: tuple[Path, Path], capsys: Any, flags: list[str]) -> None:
    log, marker = untrusted
    assert main(["verify", str(log), "--no-progress", *flags]) == 0
    assert "ok: 3 entries" in capsys.readouterr().out
    assert marker.read_text() == "imported"


def test_the_package_sample_machines_need_no_consent(sample_logs: Path, capsys: Any,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert main(["verify", str(sample_logs / "support_clean.jsonl"), "--no-progress"]) == 0
    assert "ok: 12 entries" in capsys.readouterr().out


@pytest.mark.parametrize(
    "ref, sample",
    [
        ("agent_explorer.samples:support_agent", True),
        ("agent_explorer.samples.support:support_agent", True),
        ("agent_explorer.samples_evil:machine", False),
        ("agent_explorer.samplesx.support:support_agent", False),
        ("agent_explorer.sample:support_agent", False),
        ("agent_explorer.samples.support:..", False),
        ("agent_explorer.samples..support:support_agent", False),
        (".agent_explorer.samples.support:support_agent", False),
        ("agent_explorer.samples.support:support_agent:x", False),
        ("agent_explorer.samples.support:support_agent\n", False),
        ("agent_explorer.samples.support :support_agent", False),
        ("agent_explorer.samples.sup\u0440ort:support_agent", False),  # a Cyrillic "р"
        ("evil:agent_explorer.samples", False),
        ("x.agent_explorer.samples:m", False),
        ("agent_explorer.samples", False),
    ],
)
def test_only_the_samples_package_by_whole_module_path_is_trusted(ref: str, sample: bool) -> None:
    assert is_sample_machine_ref(ref) is sample


@pytest.mark.parametrize("ref", ["agent_explorer.samples_evil:machine", "agent_explorer.samples.support:..",
                                 "os:system", "\x1b[31mred:x"])
def test_lookalike_and_malformed_refs_are_refused_before_any_import(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch, ref: str
) -> None:
    import json

    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    lines = (Path(__file__).parents[2] / "sample_logs" / "support_clean.jsonl").read_text().splitlines()
    init = json.loads(lines[0])
    init["metadata"]["machineRef"] = ref
    log = tmp_path / "lookalike.jsonl"
    log.write_text("\n".join([json.dumps(init), *lines[1:]]) + "\n")
    before = set(sys.modules)
    assert main(["verify", str(log)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "\x1b" not in err
    assert ("untrusted-machine-ref" in err) or ("invalid-machine-ref" in err)
    assert not {m for m in set(sys.modules) - before if "evil" in m or m == "os"}


def test_parse_machine_ref_names_the_bad_ref() -> None:
    assert parse_machine_ref("pkg.mod:attr.sub") == ("pkg.mod", ("attr", "sub"))
    with pytest.raises(AgentError) as caught:
        parse_machine_ref("pkg/mod:attr")
    assert caught.value.code == "invalid-machine-ref" and "pkg/mod:attr" in caught.value.message


def _prompted(log: Path, answer: str | None) -> tuple[int, str]:
    """Run `verify` on a real pseudo-terminal, answer its prompt (None: end of input), return (exit, screen)."""
    import pexpect

    child = pexpect.spawn(sys.executable, ["-m", "agent_explorer.cli", "verify", str(log), "--no-progress"],
                          cwd=str(log.parent), encoding="utf-8", timeout=60, env={"TERM": "dumb", "PATH": "/usr/bin:/bin"})
    try:
        child.expect(r"\[y/N\] ")
        screen = child.before + child.after
        if answer is None:
            child.sendeof()
        else:
            child.sendline(answer)
        child.expect(pexpect.EOF)
        screen += child.before
    finally:
        child.close()
    return int(child.exitstatus if child.exitstatus is not None else -1), screen


@pytest.mark.parametrize("answer, imported", [("y", True), ("yes", True), ("YES", True), ("n", False),
                                              ("", False), ("yep", False), (None, False)])
def test_the_prompt_on_a_terminal_shows_the_ref_and_takes_y_or_yes(
    untrusted: tuple[Path, Path], answer: str | None, imported: bool
) -> None:
    log, marker = untrusted
    code, screen = _prompted(log, answer)
    assert f"names its machine {REF}" in screen and f"Import {REF}?" in screen
    if imported:
        assert code == 0 and "ok: 3 entries" in screen and marker.read_text() == "imported"
    else:
        assert code == 2 and "declined at the prompt" in screen and not marker.exists()


def test_a_ref_needs_consent_for_html_too(untrusted: tuple[Path, Path], capsys: Any) -> None:
    log, marker = untrusted
    out = log.parent / "run.html"
    assert main(["html", str(log), "-o", str(out)]) == 2
    assert REF in capsys.readouterr().err and not marker.exists() and not out.exists()


def test_the_marker_module_really_marks(tmp_path: Path) -> None:
    """The control: importing the module the way a consented ref is imported leaves the marker."""
    import subprocess

    marker = marker_module(tmp_path)
    subprocess.run([sys.executable, "-c", f"import {MODULE}"], cwd=tmp_path, check=True)
    assert marker.read_text() == "imported"
