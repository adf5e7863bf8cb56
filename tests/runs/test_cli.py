"""`agent-explorer runs STORE_URL`: the run list on a terminal and as JSON, over a real SQLite store and the
PostgreSQL server, through the installed console script; filters, consent and every way it can fail."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tty_capture import run_on_a_tty

from agent_explorer import find_runs, summarize_runs
from agent_explorer.cli import main
from agent_explorer.runs import COLUMNS

from . import machines
from .conftest import AGENT, ASK, DONE, build_sqlite, record, runs

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = str(Path(sys.executable).parent / "agent-explorer")


def script(*args: str, **options: Any) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    return subprocess.run([SCRIPT, "runs", *args], cwd=ROOT, capture_output=True, text=True, timeout=180, env=env,
                          **options)


def run(args: list[str], capsys: Any) -> tuple[int, str, str]:
    code = main(["runs", *args])
    out, err = capsys.readouterr()
    return code, out, err


def newest_first() -> list[str]:
    dated = [(entries[-1]["recordedAt"], thread_id) for thread_id, (entries, _) in runs().items()
             if isinstance(entries, list) and runs()[thread_id][1].status != "unreadable"]
    return [thread_id for _, thread_id in sorted(dated, key=lambda pair: pair[0], reverse=True)]


def test_the_console_script_prints_the_table_newest_first_with_counts(sqlite_runs: str) -> None:
    done = script(sqlite_runs, "--machine", AGENT)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["thread", "entries", "last", "recorded", "state", "status", "verified", "tokens"]
    listed = [line.split()[0] for line in lines[1:-1]]
    assert listed == newest_first() + ["i-no-init", "j-written-outside"]  # no timestamp: last
    assert lines[-1] == ("10 threads: 2 done, 1 error, 2 idle, 2 in-flight, 1 skipped, 2 unreadable. "
                         "Listed 10 of 10 matching.")
    by_thread = {line.split()[0]: line for line in lines[1:-1]}
    assert "NO @2" in by_thread["f-diverges"] and " in-flight " in by_thread["c-in-flight"]
    assert "[log-format]" in by_thread["i-no-init"]


def test_json_rows_have_every_column(sqlite_runs: str, capsys: Any) -> None:
    code, out, err = run([sqlite_runs, "--machine", AGENT, "--json", "--limit", "0"], capsys)
    assert code == 0 and err == ""
    rows = json.loads(out)
    assert [row["thread_id"] for row in rows] == newest_first() + ["i-no-init", "j-written-outside"]
    assert all(list(row) == ["thread_id", *COLUMNS] for row in rows)
    done = next(row for row in rows if row["thread_id"] == "a-done")
    assert done["first_recorded"] == "2026-01-01T00:00:00Z" and done["last_recorded"] == "2026-01-01T00:00:04Z"
    assert done["cost_usd"] is None and done["verified"] is True and done["divergent_index"] is None
    expected = summarize_runs(sqlite_runs, AGENT).to_json()
    assert sorted(json.dumps(r, sort_keys=True) for r in rows) == sorted(
        json.dumps({**r, "first_recorded": _z(r["first_recorded"]), "last_recorded": _z(r["last_recorded"])},
                   sort_keys=True) for r in expected)


def _z(text: str | None) -> str | None:
    return None if text is None else text.replace(".000Z", "Z")


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--status", "idle"], lambda s, u: [r.thread_id for r in s if r.status == "idle"]),
        (["--status", "idle", "--status", "in-flight"],
         lambda s, u: [r.thread_id for r in s if r.status in ("idle", "in-flight")]),
        (["--state", "drafting"], lambda s, u: [r.thread_id for r in s if r.state == "drafting"]),
        (["--state", "#runs_agent.sent", "--status", "done"], lambda s, u: ["a-done", "f-diverges"]),
        (["--entered", "reviewing"], lambda s, u: list(find_runs(u, AGENT, state="reviewing").index)),
        (["--event", "APPROVE"], lambda s, u: list(find_runs(u, AGENT, event_type="APPROVE").index)),
        (["--contains", "ON ITS WAY"], lambda s, u: list(find_runs(u, AGENT, text="on its way").index)),
        (["--contains", "refund", "--status", "in-flight"], lambda s, u: ["c-in-flight", "g-unhashed"]),
    ],
    ids=["status", "statuses", "state", "state-id", "entered", "event", "contains", "contains-and-status"],
)
def test_filters(sqlite_runs: str, capsys: Any, flags: list[str], expected: Any) -> None:
    code, out, _ = run([sqlite_runs, "--machine", AGENT, "--json", *flags], capsys)
    assert code == 0
    want = expected(summarize_runs(sqlite_runs, AGENT), sqlite_runs)
    assert want, "a filter that keeps nothing proves nothing"
    assert sorted(row["thread_id"] for row in json.loads(out)) == sorted(want)


def test_limit_keeps_the_newest(sqlite_runs: str, capsys: Any) -> None:
    code, out, _ = run([sqlite_runs, "--machine", AGENT, "--limit", "2"], capsys)
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines[1:-1]] == newest_first()[:2]
    assert lines[-1].endswith("Listed 2 of 10 matching; 8 more (--limit 0 lists them).")


def test_workers_list_the_same_rows(sqlite_runs: str, capsys: Any) -> None:
    code, here, _ = run([sqlite_runs, "--machine", AGENT, "--json"], capsys)
    done = script(sqlite_runs, "--machine", AGENT, "--json", "--workers", "2")
    assert code == 0 and done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(here)


def test_postgres(postgres_runs: str, capsys: Any) -> None:
    code, out, err = run([postgres_runs, "--machine", AGENT, "--json", "--status", "in-flight"], capsys)
    assert code == 0, err
    assert [row["thread_id"] for row in json.loads(out)] == ["c-in-flight", "g-unhashed"]


def test_the_machine_a_store_names_needs_consent(tmp_path: Path, capsys: Any) -> None:
    entries = record(machines.agent, [ASK, DONE], "k")
    entries[0]["metadata"]["machineRef"] = AGENT
    url = build_sqlite(tmp_path / "named.db", {"k": (entries, runs()["e-reviewing"][1])})
    done = script(url, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "--trust-machine-ref" in done.stderr and AGENT in done.stderr
    trusted = script(url, "--trust-machine-ref", "--json")
    assert trusted.returncode == 0, trusted.stderr
    assert [row["status"] for row in json.loads(trusted.stdout)] == ["idle"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["http://example.com/runs"], "runs takes a STORE_URL"),
        (["sqlite:///{tmp}/missing.db", "--machine", AGENT], "no such SQLite store"),
        (["{url}#a-done", "--machine", AGENT], "names one thread"),
        (["{url}", "--machine", "tests.runs.machines:nope"], "nope"),
        (["{url}"], "the threads of this store were recorded by 2 machines: 'runs_agent' (8 threads"),
        (["{url}", "--machine", AGENT, "--state", "refunding"], "has no state 'refunding'"),
        (["{url}", "--machine", AGENT, "--limit", "-1"], "--limit"),
        (["{other}", "--machine", AGENT], "no thread of this store was recorded by machine 'runs_agent'"),
    ],
    ids=["not-a-store", "missing-file", "one-thread", "unknown-machine", "no-machine", "unknown-state",
         "bad-limit", "another-machine"],
)
def test_bad_input_is_one_line_and_exit_2(sqlite_runs: str, tmp_path: Path, capsys: Any, args: list[str],
                                          message: str) -> None:
    other = build_sqlite(tmp_path / "other.db", {"h": runs()["h-other-machine"]})
    filled = [a.format(url=sqlite_runs, tmp=tmp_path, other=other) for a in args]
    code, out, err = run(filled, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_a_terminal_gets_a_progress_bar(sqlite_runs: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    done, drawn = run_on_a_tty([SCRIPT, "runs", sqlite_runs, "--machine", AGENT], cwd=ROOT, timeout=120, env=env)
    assert done.returncode == 0
    assert "summarizing [" in drawn and "10/10 threads" in drawn
    assert done.stdout.decode().startswith("thread ")
