"""`agent-explorer verify STORE_URL --all-threads`: a deploy gate over a real SQLite store, in-process, with
worker processes and on a Dask scheduler; exit codes 0/1/2, JUnit and JSON output, a progress bar on a TTY."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from filled_stores import sqlite_store_of as make_store
from tty_capture import run_on_a_tty

from agent_explorer import create_replay_entry, init_entry, initial_transition, transition
from agent_explorer.cli import main

MODULE = textwrap.dedent(
    '''
    import os
    from agent_explorer import assign, setup

    def build(version, limit):
        return setup(guards={"room": lambda c, e, p: c["n"] < limit}).create_machine({
            "id": "gate_counter", "version": version, "context": {"n": 0}, "initial": "on",
            "states": {"on": {"on": {"INC": {"guard": "room", "actions": assign({"n": lambda c, e, p: c["n"] + 1})},
                                     "OFF": "off"}},
                       "off": {"type": "final"}},
        })

    counter = build("1", 5)
    counter_v2 = build("2", 2)
    other = setup().create_machine({"id": "gate_other", "initial": "a", "states": {"a": {}}})
    '''
)
MODULE_NAME = "gate_machines"


@pytest.fixture
def gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    (tmp_path / f"{MODULE_NAME}.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    import importlib

    yield importlib.import_module(MODULE_NAME)
    sys.modules.pop(MODULE_NAME, None)


def record(machine: Any, events: list[dict[str, Any]], ref: str) -> list[dict[str, Any]]:
    entries = [init_entry(machine, metadata={"machineRef": ref})]
    snapshot, _ = initial_transition(machine)
    for index, event in enumerate(events, start=1):
        snapshot, _ = transition(machine, snapshot, event)
        entries.append(create_replay_entry(machine, event, index, snapshot_after=snapshot))
    return entries


INC, OFF = {"type": "INC"}, {"type": "OFF"}
REF = f"{MODULE_NAME}:counter"


@pytest.fixture
def production(gate: Any, tmp_path: Path) -> str:
    """A snapshot of production: clean threads, one tampered, one of another machine, one by version 2."""
    tampered = record(gate.counter, [INC, INC, INC], REF)
    tampered[2]["verification"]["stateHash"] = "f" * 64
    return make_store(tmp_path / "prod.db", {
        "run-1": record(gate.counter, [INC, OFF], REF),
        "run-2": record(gate.counter, [INC, INC], REF),  # still running
        "run-3": tampered,
        "run-4": record(gate.other, [], f"{MODULE_NAME}:other"),
        "run-5": record(gate.counter_v2, [INC, INC, INC, OFF], f"{MODULE_NAME}:counter_v2"),
    })


def run(argv: list[str], capsys: Any) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_a_divergent_fleet_fails_the_gate_with_a_junit_report(production: str, tmp_path: Path, capsys: Any) -> None:
    junit = tmp_path / "verify.xml"
    code, out, _ = run(["verify", production, "--all-threads", "--machine", REF, "--junit", str(junit)], capsys)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(f"diverges: 3 threads of {production} checked against machine gate_counter version 1 ")
    assert "(10 entries: 10 checked against a hash, 0 without a hash)" in lines[0]
    assert "1 divergent; 1 could not be verified; 1 skipped (recorded by another machine)" in lines[0]
    assert "2 runs not finished" in lines[0]
    assert "thread run-3: divergence at index 2: event INC" in lines[1]
    assert lines[2].startswith("thread run-5: could not verify: recorded by another version of this machine")
    assert "--ignore-version" in lines[2] and "[machine-version-mismatch]" in lines[2]
    assert lines[-1] == f"JUnit report: {junit}"
    cases = {case.get("name"): case for case in ET.parse(junit).getroot().iter("testcase")}
    assert sorted(cases) == ["run-1", "run-2", "run-3", "run-4", "run-5"]
    assert cases["run-3"].find("failure") is not None and cases["run-5"].find("error") is not None
    assert cases["run-4"].find("skipped") is not None


def test_ignore_version_asks_what_the_new_code_derives(production: str, capsys: Any) -> None:
    code, out, _ = run(["verify", production, "--all-threads", "--machine", REF, "--ignore-version", "--json"], capsys)
    report = json.loads(out)
    assert code == 1 and report["errors"] == []
    # version 2 stopped counting at 2; this machine counts a third INC at index 3.
    assert {(d["threadId"], d["index"]) for d in report["divergent"]} == {("run-3", 2), ("run-5", 3)}


def test_a_clean_fleet_passes_and_json_says_what_was_checked(gate: Any, tmp_path: Path, capsys: Any) -> None:
    url = make_store(tmp_path / "clean.db", {f"t{n}": record(gate.counter, [INC] * n + [OFF], REF) for n in range(4)})
    code, out, _ = run(["verify", url, "--all-threads", "--machine", REF, "--json"], capsys)
    report = json.loads(out)
    assert code == 0 and report["ok"] is True
    assert (report["threadsChecked"], report["entriesChecked"], report["checked"], report["unverified"]) == (4, 14, 14, 0)
    code, out, _ = run(["verify", url, "--all-threads", "--machine", REF], capsys)
    assert code == 0 and out.startswith(f"ok: 4 threads of {url} checked against machine gate_counter version 1 ")


def test_worker_processes_give_the_same_report(production: str, capsys: Any) -> None:
    code, here, _ = run(["verify", production, "--all-threads", "--machine", REF, "--json"], capsys)
    code_workers, there, _ = run(
        ["verify", production, "--all-threads", "--machine", REF, "--json", "--workers", "2", "--batch-size", "1"],
        capsys)
    assert code == code_workers == 1 and json.loads(here) == json.loads(there)


def test_a_dask_scheduler_gives_the_same_report(production: str, capsys: Any) -> None:
    distributed = pytest.importorskip("distributed")
    code, here, _ = run(["verify", production, "--all-threads", "--machine", REF, "--json"], capsys)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=50) as cluster:
        code_dask, there, _ = run(["verify", production, "--all-threads", "--machine", REF, "--json",
                                   "--scheduler", cluster.scheduler_address], capsys)
    assert code == code_dask == 1 and json.loads(here) == json.loads(there)


def test_nothing_to_verify_cannot_pass_the_gate(gate: Any, tmp_path: Path, capsys: Any) -> None:
    url = make_store(tmp_path / "others.db", {"x": record(gate.other, [], f"{MODULE_NAME}:other")})
    code, out, err = run(["verify", url, "--all-threads", "--machine", REF], capsys)
    assert code == 2 and out.startswith("nothing verified: 0 threads")
    assert "nothing was verified: no thread of this store was recorded by machine 'gate_counter'" in err


def test_the_store_never_chooses_the_machine(gate: Any, production: str, tmp_path: Path, capsys: Any) -> None:
    # A store of one machine: the same consent rule as every verb, one line naming the ref and how to agree to it.
    url = make_store(tmp_path / "one.db", {"run-1": record(gate.counter, [INC, OFF], REF)})
    code, out, err = run(["verify", url, "--all-threads"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"names machine '{REF}'" in err and "--trust-machine-ref" in err and f"--machine {REF}" in err
    assert "untrusted-machine-ref" in err
    assert "--trust-machine-ref" in _verify_help()
    # A store of several machines: no ref is even offered; --machine must pick one (issue 21, item 16).
    code, out, err = run(["verify", production, "--all-threads", "--trust-machine-ref"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert ("recorded by 2 machines: 'gate_counter' (4 threads, machineRef gate_machines:counter), "
            "'gate_other' (1 thread, machineRef gate_machines:other)") in err


def _verify_help() -> str:
    from agent_explorer.cli import build_parser

    verbs = next(a for a in build_parser()._actions if a.dest == "verb")  # noqa: SLF001 - argparse has no public way
    return str(verbs.choices["verify"].format_help())  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "target, message",
    [("{url}#run-1", "names one thread"), ("{tmp}/prod.jsonl", "takes a STORE_URL"),
     ("sqlite:///{tmp}/nope.db", "no such SQLite store")],
    ids=["one-thread", "a-file", "missing-store"],
)
def test_bad_targets_are_one_line_errors(production: str, tmp_path: Path, capsys: Any, target: str, message: str) -> None:
    code, _, err = run(["verify", target.format(url=production, tmp=tmp_path), "--all-threads", "--machine", REF],
                       capsys)
    assert code == 2 and err.count("\n") == 1 and message in err
    assert not (tmp_path / "nope.db").exists()


def test_an_unreachable_scheduler_is_one_line(production: str, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("distributed")
    monkeypatch.setenv("AGENT_EXPLORER_DB_TIMEOUT", "1")
    code, _, err = run(["verify", production, "--all-threads", "--machine", REF, "--scheduler", "tcp://127.0.0.1:9"],
                       capsys)
    assert code == 2 and err.count("\n") == 1 and "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err


def test_a_terminal_gets_a_progress_bar(production: str) -> None:
    """stderr on a real pseudo-terminal: the bar is drawn there (and the report still goes to stdout)."""
    done, drawn = run_on_a_tty(
        [sys.executable, "-m", "agent_explorer.cli", "verify", production, "--all-threads", "--machine", REF,
         "--batch-size", "1"],
        timeout=120, env=os.environ.copy(),
    )
    assert done.returncode == 1
    assert "verifying [" in drawn and "5/5 threads" in drawn
    assert done.stdout.decode().startswith("diverges: 3 threads")


def test_a_machine_in_the_current_folder_is_found_with_worker_processes_too(tmp_path: Path) -> None:
    """The installed `agent-explorer` script (whose import path, unlike `python -m`'s, does not start with the
    current folder), no PYTHONPATH: the folder a user runs the gate from holds their machine."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "my_gate.py").write_text(MODULE, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    sys.path.insert(0, str(work))
    try:
        import importlib

        machines = importlib.import_module("my_gate")
        url = make_store(work / "runs.db", {"run-1": record(machines.counter, [INC, OFF], "my_gate:counter")})
    finally:
        sys.path.remove(str(work))
        sys.modules.pop("my_gate", None)
    for extra in ([], ["--workers", "2"]):
        done = subprocess.run(
            [str(Path(sys.executable).parent / "agent-explorer"), "verify", url, "--all-threads", "--machine",
             "my_gate:counter", *extra], cwd=work, capture_output=True, text=True, timeout=120, env=env,
        )
        assert done.returncode == 0, (extra, done.stderr)
        assert done.stdout.startswith("ok: 1 thread"), done.stdout
