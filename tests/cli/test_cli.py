"""The command line as a user meets it: real log files, a real SQLite store, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agent_explorer import create_replay_entry, init_entry, read_log, transition, write_log
from agent_explorer.cli import main
from agent_explorer.cli.commands import terminal_safe

MACHINE_MODULE = textwrap.dedent(
    '''
    from agent_explorer import assign, setup

    counter = setup(
        guards={"small": lambda context, event, params: context["count"] < 3},
    ).create_machine({
        "id": "cli_counter",
        "version": "1",
        "context": {"count": 0},
        "initial": "counting",
        "states": {
            "counting": {
                "on": {
                    "INC": {"guard": "small",
                            "actions": assign({"count": lambda context, event, params: context["count"] + 1})},
                    "STOP": "stopped",
                },
            },
            "stopped": {"type": "final"},
        },
    })
    '''
)


@pytest.fixture
def machine_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    (tmp_path / "cli_machines.py").write_text(MACHINE_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    module = importlib.import_module("cli_machines")
    yield module
    sys.modules.pop("cli_machines", None)


def record(machine: Any, events: list[dict[str, Any]], *, ref: str | None = "cli_machines:counter") -> list[dict]:
    metadata = {"machineRef": ref} if ref else None
    entries = [init_entry(machine, input=None, metadata=metadata)]
    from agent_explorer import initial_transition

    snapshot, _ = initial_transition(machine)
    for index, event in enumerate(events, start=1):
        snapshot, _ = transition(machine, snapshot, event)
        entries.append(create_replay_entry(machine, event, index, snapshot_after=snapshot))
    return entries


def tamper_hash(entries: list[dict], index: int) -> list[dict]:
    copy = json.loads(json.dumps(entries))
    copy[index]["verification"]["stateHash"] = "0" * 64
    return copy


def test_verify_ok_finds_the_machine_the_log_names_when_trusted(machine_module: Any, tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "run.jsonl"
    write_log(path, record(machine_module.counter, [{"type": "INC"}, {"type": "INC"}, {"type": "STOP"}]))
    assert main(["verify", str(path), "--no-progress", "--trust-machine-ref"]) == 0
    assert "ok: 4 entries" in capsys.readouterr().out


def test_verify_reports_the_first_divergence_and_exits_1(machine_module: Any, tmp_path: Path, capsys: Any) -> None:
    entries = record(machine_module.counter, [{"type": "INC"}] * 4)
    path = tmp_path / "bad.jsonl"
    write_log(path, tamper_hash(tamper_hash(entries, 2), 4))
    assert main(["verify", str(path), "--trust-machine-ref"]) == 1
    out = capsys.readouterr().out
    assert "divergence at index 2" in out and entries[2]["id"] in out
    assert "1 more divergent" in out
    assert main(["verify", str(path), "--all", "--trust-machine-ref"]) == 1
    assert "divergence at index 4" in capsys.readouterr().out


def test_verify_json_is_machine_readable(machine_module: Any, tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "bad.jsonl"
    write_log(path, tamper_hash(record(machine_module.counter, [{"type": "INC"}]), 1))
    assert main(["verify", str(path), "--json", "--trust-machine-ref"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and report["firstDivergence"] == 1
    assert report["divergences"][0]["kind"] == "state"
    assert report["divergences"][0]["recordedHash"] == "0" * 64


def test_verify_strict_requires_hashes(machine_module: Any, tmp_path: Path, capsys: Any) -> None:
    entries = record(machine_module.counter, [{"type": "INC"}])
    del entries[1]["verification"]
    path = tmp_path / "unhashed.jsonl"
    write_log(path, entries)
    assert main(["verify", str(path), "--trust-machine-ref"]) == 0
    assert main(["verify", str(path), "--strict", "--trust-machine-ref"]) == 1
    assert "missing-verification" in capsys.readouterr().out


def test_machine_override_and_unknown_machine(machine_module: Any, tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "anon.jsonl"
    write_log(path, record(machine_module.counter, [{"type": "INC"}], ref=None))
    assert main(["verify", str(path)]) == 2
    assert "--machine" in capsys.readouterr().err
    assert main(["verify", str(path), "--machine", "cli_machines:counter"]) == 0
    assert main(["verify", str(path), "--machine", "no_such_module_xyz:m"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no_such_module_xyz" in err


@pytest.mark.parametrize(
    "content, expected",
    [
        (None, "no such log file"),
        ('{"schemaVersion": 1,\n', "log-format"),
        ("not json at all\n", "line 1"),
    ],
    ids=["missing-file", "truncated", "garbled"],
)
def test_bad_files_are_one_line_errors(tmp_path: Path, capsys: Any, content: str | None, expected: str) -> None:
    path = tmp_path / "log.jsonl"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    assert main(["verify", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err and "Traceback" not in err


def test_show_filters_and_escapes_terminal_controls(machine_module: Any, tmp_path: Path, capsys: Any) -> None:
    events = [{"type": "INC", "note": "\x1b[2J\x1b[31mred\u202e"}, {"type": "STOP"}]
    path = tmp_path / "run.jsonl"
    write_log(path, record(machine_module.counter, events))
    assert main(["show", str(path), "--type", "INC"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out and "[2J" in out
    assert "STOP" not in out and "(1 shown of 3 entries)" in out
    assert main(["show", str(path), "--grep", "STOP"]) == 0
    assert "(1 shown of 3 entries)" in capsys.readouterr().out


def test_terminal_safe_cuts_and_escapes() -> None:
    assert terminal_safe("a\nb\tc\x1b", 20) == "a\\x0ab\\x09c\\x1b"
    assert terminal_safe("x" * 20, 5) == "xxxx…"


def test_export_import_fork_threads_through_a_sqlite_store(machine_module: Any, tmp_path: Path, capsys: Any) -> None:
    src = tmp_path / "run.jsonl"
    entries = record(machine_module.counter, [{"type": "INC"}, {"type": "INC"}, {"type": "STOP"}])
    write_log(src, entries)
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    assert main(["import", str(src), f"{db}#t1"]) == 0
    assert main(["import", str(src), f"{db}#t1"]) == 2  # never appends onto a non-empty thread
    assert "already has 4 entries" in capsys.readouterr().err
    assert main(["fork", f"{db}#t1", "t2", "--at", "2"]) == 0
    assert main(["threads", "--store", db]) == 0
    out = capsys.readouterr().out
    assert "t1" in out and "t2" in out and "(2 threads)" in out
    assert main(["verify", f"{db}#t2", "--no-progress", "--trust-machine-ref"]) == 0
    back = tmp_path / "back.jsonl"
    assert main(["export", f"{db}#t1", str(back)]) == 0
    assert read_log(back) == entries
    assert back.read_bytes() == src.read_bytes()
    assert main(["export", f"{db}#t1", str(back)]) == 2  # never overwrites a file


def test_reading_verbs_never_write_to_a_sqlite_store(machine_module: Any, tmp_path: Path, capsys: Any) -> None:
    """A store another program keeps in rollback-journal mode stays byte for byte as it was: reading opens it
    read-only (no switch to WAL, no table created, no -wal file left beside it)."""
    import hashlib
    import sqlite3

    src = tmp_path / "run.jsonl"
    write_log(src, record(machine_module.counter, [{"type": "INC"}, {"type": "STOP"}]))
    path = tmp_path / "theirs.db"
    assert main(["import", str(src), f"sqlite:///{path}#t1"]) == 0
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0] == "delete"
    conn.close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    db = f"sqlite:///{path}"
    assert main(["threads", "--store", db]) == 0
    assert main(["show", f"{db}#t1"]) == 0
    assert main(["verify", f"{db}#t1", "--no-progress", "--trust-machine-ref"]) == 0
    assert main(["export", f"{db}#t1", str(tmp_path / "out.jsonl")]) == 0
    assert main(["verify", db, "--all-threads", "--machine", "cli_machines:counter", "--no-progress"]) == 0
    capsys.readouterr()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("theirs")) == ["theirs.db"]


def test_file_fork_writes_the_prefix(machine_module: Any, tmp_path: Path) -> None:
    src = tmp_path / "run.jsonl"
    write_log(src, record(machine_module.counter, [{"type": "INC"}, {"type": "STOP"}]))
    assert main(["fork", str(src), str(tmp_path / "fork.jsonl"), "--at", "2"]) == 0
    assert [e["index"] for e in read_log(tmp_path / "fork.jsonl")] == [0, 1]


def test_missing_store_and_thread_are_errors_not_new_files(tmp_path: Path, capsys: Any) -> None:
    missing = tmp_path / "nope.db"
    assert main(["verify", f"sqlite:///{missing}#t"]) == 2
    assert not missing.exists()
    assert main(["show", f"sqlite:///{missing}"]) == 2
    assert "#<thread id>" in capsys.readouterr().err


def test_unreachable_postgres_is_one_line(capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_EXPLORER_DB_TIMEOUT", "2")
    code = main(["threads", "--store", "postgresql://agent@127.0.0.1:1/none?connect_timeout=2"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err


def test_console_script_runs_without_traceback(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "agent_explorer.cli", "verify", str(tmp_path / "missing.jsonl")],
        capture_output=True, text=True,
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr and "no such log file" in out.stderr


def test_open_serves_the_explorer_notebook(tmp_path: Path) -> None:
    """The README's first command: JupyterLab answers on the printed URL with notebook 1 (as root too)."""
    import re
    import signal
    import time
    import urllib.request

    pytest.importorskip("jupyterlab")
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_explorer.cli", "open", "--no-browser", "--port", "18931"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )
    try:
        assert process.stdout is not None
        url = None
        for line in process.stdout:
            found = re.search(r"http://127\.0\.0\.1:\d+/lab/tree/notebooks/01_explore_a_run\.ipynb\?token=\w+", line)
            if found:
                url = found.group(0)
                break
        assert url, "open printed no notebook URL"
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    assert response.status == 200
                    break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.5)
        api = url.replace("/lab/tree/notebooks/", "/api/contents/notebooks/")
        with urllib.request.urlopen(api, timeout=10) as response:
            notebook = json.loads(response.read())
        assert notebook["type"] == "notebook" and notebook["content"]["cells"]
    finally:
        import os

        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()


def test_copies_keep_the_stored_json_text_byte_for_byte(machine_module: Any, tmp_path: Path) -> None:
    """Export/import move the JSON text as written (key order, spacing, escapes), between files and stores."""
    entries = record(machine_module.counter, [{"type": "INC", "note": "é \U0001f600"}, {"type": "STOP"}])
    odd = "\n".join(json.dumps(e, ensure_ascii=True, indent=None, separators=(", ", ": ")) for e in entries) + "\n"
    src = tmp_path / "odd.jsonl"
    src.write_text(odd, encoding="utf-8")
    a, b = f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    assert main(["import", str(src), f"{a}#t"]) == 0
    assert main(["export", f"{a}#t", f"{b}#copy"]) == 0
    assert main(["export", f"{b}#copy", str(tmp_path / "back.jsonl")]) == 0
    assert (tmp_path / "back.jsonl").read_text(encoding="utf-8") == odd
    assert main(["export", f"{b}#copy", f"{b}#copy"]) == 2  # onto a non-empty thread: refused


def test_a_flag_the_verb_does_not_take_is_reported_with_that_verbs_usage(sample_logs: Path, capsys: Any) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["show", str(sample_logs / "support_clean.jsonl"), "--machine", "x"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: agent-explorer show ") and "unrecognized arguments: --machine x" in err
