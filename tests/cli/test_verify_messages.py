"""`agent-explorer verify` says what it checked: every message a user can meet, on real files, with exit codes.

Unhashed entries are counted (never a bare "ok"), swapped lines are "out of order" with both indices, an empty
file is an empty log, and a run whose machine is still active verifies with exit 0 and names its last state.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agent_explorer import create_replay_entry, init_entry, initial_transition, transition, write_log
from agent_explorer.cli import main

MODULE = textwrap.dedent(
    '''
    from agent_explorer import assign, setup

    ticket = setup().create_machine({
        "id": "cli_ticket",
        "version": "1",
        "context": {"notes": 0},
        "initial": "triage",
        "states": {
            "triage": {"on": {"NOTE": {"actions": assign({"notes": lambda c, e, p: c["notes"] + 1})},
                              "ASSESS": "deciding"}},
            "deciding": {"on": {"APPROVE": "resolved"}},
            "resolved": {"type": "final"},
        },
    })
    '''
)

FINISHED = [{"type": "NOTE"}, {"type": "NOTE"}, {"type": "ASSESS"}, {"type": "APPROVE"}]


@pytest.fixture
def ticket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    (tmp_path / "cli_ticket_machines.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    yield importlib.import_module("cli_ticket_machines").ticket
    sys.modules.pop("cli_ticket_machines", None)


def record(machine: Any, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    entries = [init_entry(machine, metadata={"machineRef": "cli_ticket_machines:ticket"})]
    snapshot, _ = initial_transition(machine)
    for index, event in enumerate(events, start=1):
        snapshot, _ = transition(machine, snapshot, event)
        entries.append(create_replay_entry(machine, event, index, snapshot_after=snapshot))
    return entries


def run(argv: list[str], capsys: Any) -> tuple[int, str, str]:
    # These logs name this test's own machine module; consent to import it is tested in test_consent.py.
    consent = ["--trust-machine-ref"] if argv[:1] == ["verify"] and "--machine" not in argv else []
    code = main([*argv, *consent, "--no-progress"])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_fully_hashed_log_says_every_entry_was_checked(ticket: Any, tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "run.jsonl"
    write_log(path, record(ticket, FINISHED))
    code, out, _ = run(["verify", str(path)], capsys)
    assert code == 0
    assert out == (f"ok: 5 entries of {path} against machine cli_ticket version 1: "
                   "5 checked against a hash, 0 without a hash\n")


def test_unhashed_entries_are_counted_and_never_hidden_behind_ok(ticket: Any, tmp_path: Path, capsys: Any) -> None:
    entries = record(ticket, FINISHED)
    del entries[2]["verification"]
    path = tmp_path / "unhashed.jsonl"
    write_log(path, entries)
    code, out, _ = run(["verify", str(path)], capsys)
    assert code == 0  # without --strict an unhashed entry does not fail the run ...
    assert out.startswith("ok: 5 entries of ") and "4 checked against a hash, 1 without a hash (not checked)" in out
    code, out, _ = run(["verify", str(path), "--json"], capsys)
    report = json.loads(out)
    assert code == 0 and report["ok"] is True  # ... but the JSON says how much was unchecked
    assert (report["entries"], report["checked"], report["unverified"]) == (5, 4, 1)
    assert report["finished"] is True and report["lastState"] == "resolved"
    code, out, _ = run(["verify", str(path), "--strict"], capsys)
    assert code == 1 and "kind missing-verification" in out and "divergence at index 2" in out


def test_a_log_with_no_hash_at_all_is_not_called_ok(ticket: Any, tmp_path: Path, capsys: Any) -> None:
    entries = record(ticket, FINISHED)
    for entry in entries:
        del entry["verification"]
    path = tmp_path / "bare.jsonl"
    write_log(path, entries)
    code, out, _ = run(["verify", str(path)], capsys)
    assert code == 0 and not out.startswith("ok")
    assert out.startswith("not checked: 5 entries of ") and "0 checked against a hash, 5 without a hash" in out


def test_a_divergent_log_ends_with_what_was_checked(ticket: Any, tmp_path: Path, capsys: Any) -> None:
    entries = record(ticket, FINISHED)
    entries[3]["verification"]["stateHash"] = "0" * 64
    del entries[1]["verification"]
    path = tmp_path / "bad.jsonl"
    write_log(path, entries)
    code, out, _ = run(["verify", str(path)], capsys)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("divergence at index 3: event ASSESS")
    assert lines[-1] == (f"diverges: 5 entries of {path} against machine cli_ticket version 1: 4 checked against "
                         "a hash, 1 without a hash (not checked); 1 divergence, the first at index 3")
    code, out, _ = run(["verify", str(path), "--json"], capsys)
    report = json.loads(out)
    assert code == 1 and report["ok"] is False and (report["checked"], report["unverified"]) == (4, 1)
    assert report["divergences"][0]["index"] == 3 and report["firstDivergence"] == 3


def test_an_unfinished_run_verifies_and_says_where_it_stopped(ticket: Any, tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "cut.jsonl"
    write_log(path, record(ticket, FINISHED[:3]))  # cut at a line boundary: the approval never came
    code, out, _ = run(["verify", str(path)], capsys)
    assert code == 0
    assert out.splitlines() == [
        f"ok: 4 entries of {path} against machine cli_ticket version 1: 4 checked against a hash, 0 without a hash",
        "the run is not finished: last state deciding",
    ]
    code, out, _ = run(["verify", str(path), "--json"], capsys)
    report = json.loads(out)
    assert code == 0 and report["finished"] is False and report["status"] == "active"
    assert report["lastState"] == "deciding"


def test_swapped_lines_are_out_of_order_not_missing(ticket: Any, tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "swapped.jsonl"
    write_log(path, record(ticket, FINISHED))
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[3], lines[4] = lines[4], lines[3]  # entries 3 and 4 trade places
    path.write_text("".join(lines), encoding="utf-8")
    code, _, err = run(["verify", str(path)], capsys)
    assert code == 2 and err.count("\n") == 1
    assert "line 4: out of order: index 4 comes before index 3, which is at line 5" in err
    assert "missing" not in err


def test_a_real_gap_is_still_a_gap(ticket: Any, tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "gap.jsonl"
    write_log(path, record(ticket, FINISHED))
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    del lines[2]
    path.write_text("".join(lines), encoding="utf-8")
    code, _, err = run(["verify", str(path)], capsys)
    assert code == 2 and "index gap: expected index 2, found 3 (entries 2..2 are missing)" in err


def test_swapped_elements_of_a_json_array_are_out_of_order(ticket: Any, tmp_path: Path, capsys: Any) -> None:
    entries = record(ticket, FINISHED)
    entries[1], entries[2] = entries[2], entries[1]
    path = tmp_path / "swapped.json"
    path.write_text("[\n" + ",\n".join(json.dumps(e) for e in entries) + "\n]\n", encoding="utf-8")
    code, _, err = run(["verify", str(path)], capsys)
    assert code == 2 and "out of order: index 2 comes before index 1, which is at element 2 (line 4)" in err


@pytest.mark.parametrize("with_machine", [False, True], ids=["log-names-machine", "with-machine-flag"])
def test_an_empty_file_is_an_empty_log(ticket: Any, tmp_path: Path, capsys: Any, with_machine: bool) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("", encoding="utf-8")
    argv = ["verify", str(path)] + (["--machine", "cli_ticket_machines:ticket"] if with_machine else [])
    code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    assert err == (f"agent-explorer: error [empty-log]: {path} is an empty log: it holds no entries, so there is "
                   "nothing to verify\n")


def test_fleet_flags_on_one_log_are_refused(ticket: Any, tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "run.jsonl"
    write_log(path, record(ticket, FINISHED))
    code, _, err = run(["verify", str(path), "--junit", str(tmp_path / "x.xml"), "--workers", "2"], capsys)
    assert code == 2 and "--workers, --junit only apply with --all-threads" in err
    assert not (tmp_path / "x.xml").exists()
