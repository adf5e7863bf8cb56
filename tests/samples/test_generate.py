"""`ensure_samples`: the generated sample logs are written deterministically, once, atomically, and only when stale.

Real files in a temporary folder, real SQLite stores, real processes racing on one folder. The long run is
shortened (`tickets=3`) so each generation takes a fraction of a second; the full one is the session fixture's.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_explorer.cli import main
from agent_explorer.samples import ensure_samples
from agent_explorer.samples.catalog import SAMPLES, jsonl_name
from agent_explorer.samples.generate import STAMP
from agent_explorer.samples.long_run import entries_for_tickets
from agent_explorer.samples.shipped import GOLDEN_FILES, shipped_sample_logs_dir
from agent_explorer.stores import SqliteEventLogStore

TICKETS = 3


def _state(folder: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in folder.iterdir() if not p.name.startswith(".s")}


def _threads(path: Path) -> dict[str, list[str]]:
    async def read() -> dict[str, list[str]]:
        store = SqliteEventLogStore(path, read_only=True)
        try:
            return {info[0]: await store.read_raw(info[0]) for info in await store.list_threads(limit=100)}
        finally:
            await store.aclose()

    return asyncio.run(read())


def _generate(folder: Path, **options: Any) -> list[str]:
    said: list[str] = []
    ensure_samples(folder, tickets=TICKETS, log=said.append, **options)
    return said


def test_a_fresh_folder_gets_the_shipped_logs_and_a_store_of_every_thread(tmp_path: Path) -> None:
    said = _generate(tmp_path)
    assert len(said) == 1 and "writing" in said[0]
    assert not [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name or p.name.endswith(("-wal", "-shm"))]
    shipped = shipped_sample_logs_dir()
    for name in GOLDEN_FILES:
        assert (tmp_path / name).read_bytes() == (shipped / name).read_bytes(), name
    threads = _threads(tmp_path / "samples.db")
    assert sorted(threads) == sorted(s.thread_id for s in SAMPLES)
    for sample in SAMPLES:  # each thread is its JSONL file, text for text
        lines = (tmp_path / jsonl_name(sample.thread_id)).read_text(encoding="utf-8").splitlines()
        assert threads[sample.thread_id] == lines, sample.thread_id
    assert len(threads["inbox-long"]) == entries_for_tickets(TICKETS)


def test_a_second_call_writes_nothing(tmp_path: Path) -> None:
    _generate(tmp_path)
    before = _state(tmp_path)
    assert _generate(tmp_path) == []
    assert _state(tmp_path) == before


def test_it_writes_from_inside_a_running_event_loop_as_a_notebook_calls_it(tmp_path: Path) -> None:
    async def notebook_cell() -> list[str]:  # Jupyter runs every cell inside its loop: asyncio.run refuses there
        asyncio.get_running_loop()
        return _generate(tmp_path)

    said = asyncio.run(notebook_cell())
    assert len(said) == 1 and "writing" in said[0]
    assert len(_threads(tmp_path / "samples.db")["inbox-long"]) == entries_for_tickets(TICKETS)
    assert _generate(tmp_path) == []  # and the stamp it wrote is current


def test_generation_is_deterministic(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    _generate(a)
    _generate(b)
    assert (a / "inbox_long.jsonl").read_bytes() == (b / "inbox_long.jsonl").read_bytes()
    assert _threads(a / "samples.db") == _threads(b / "samples.db")
    stamp_a, stamp_b = (json.loads((d / STAMP).read_text()) for d in (a, b))
    assert stamp_a == stamp_b


@pytest.mark.parametrize("damage", ["remove-store", "stale-stamp", "older-format-stamp"])
def test_a_missing_or_stale_file_of_its_own_is_written_again(tmp_path: Path, damage: str) -> None:
    _generate(tmp_path)
    good_log = (tmp_path / "inbox_long.jsonl").read_bytes()
    good_threads = _threads(tmp_path / "samples.db")
    stamp = json.loads((tmp_path / STAMP).read_text())
    if damage == "remove-store":
        (tmp_path / "samples.db").unlink()
    elif damage == "stale-stamp":
        (tmp_path / STAMP).write_text(json.dumps({**stamp, "key": "made by an older version"}))
    else:  # a folder written before the manifest: the long run's digest and the store's threads prove them ours
        files = {name: record for name, record in stamp["files"].items() if name != "triage.db"}
        legacy = {"format": 1, "key": "older", "tickets": stamp["tickets"], "files": files}
        (tmp_path / STAMP).write_text(json.dumps(legacy))
        (tmp_path / "triage.db").unlink()  # the generator of format 1 wrote no triage store
    assert len(_generate(tmp_path)) == 1
    assert (tmp_path / "inbox_long.jsonl").read_bytes() == good_log
    assert _threads(tmp_path / "samples.db") == good_threads
    assert (tmp_path / "support_clean.jsonl").read_bytes() == (
        shipped_sample_logs_dir() / "support_clean.jsonl"
    ).read_bytes()


@pytest.mark.parametrize("case", ["users-store", "users-notes", "edited-long-run", "edited-shipped-log"])
def test_a_file_it_did_not_write_is_kept_and_named_unless_forced(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    import sqlite3

    import agent_explorer.samples.generate as generate

    monkeypatch.setattr(generate, "LONG_RUN_TICKETS", TICKETS)
    name = {"users-store": "samples.db", "users-notes": "support_clean.jsonl", "edited-long-run": "inbox_long.jsonl",
            "edited-shipped-log": "support_clean.jsonl"}[case]
    target = tmp_path / name
    holder = None
    if case == "users-store":  # the repro: the user's own threads, one commit not yet checkpointed
        from agent_explorer import read_log

        mine = list(read_log(shipped_sample_logs_dir() / "support_clean.jsonl"))
        store = SqliteEventLogStore(target)
        store.sync.append(thread_id="mine", expected_index=0, entries=mine[:1])
        store.sync.close()
        holder = sqlite3.connect(target, isolation_level=None)
        holder.execute("PRAGMA wal_autocheckpoint = 0")
        holder.execute("INSERT INTO agent_event_log VALUES ('mine', 1, 'mine-1', '{}')")
        assert (tmp_path / "samples.db-wal").stat().st_size > 0
    elif case == "users-notes":
        target.write_text("notes\n")
    else:  # a folder the generator made, then a file of it edited by the user
        _generate(tmp_path)
        with target.open("a") as handle:
            handle.write("my edit\n")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file() and p.name != ".samples.lock"}
    assert main(["samples", "--dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(target) in err and "[file-exists]" in err and "--force" in err
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file() and p.name != ".samples.lock"}
    assert after == before  # nothing written, nothing removed: the -wal with the user's commit is still there
    if holder is not None:
        assert holder.execute("SELECT count(*) FROM agent_event_log WHERE thread_id = 'mine'").fetchone() == (2,)
        holder.close()
    assert main(["samples", "--dir", str(tmp_path), "--force"]) == 0
    assert "mine" not in _threads(tmp_path / "samples.db")
    assert (tmp_path / "support_clean.jsonl").read_bytes() == (shipped_sample_logs_dir() / "support_clean.jsonl").read_bytes()
    capsys.readouterr()
    assert main(["samples", "--dir", str(tmp_path)]) == 0  # now its own files again: current, nothing said
    assert capsys.readouterr().err == ""


def test_force_help_names_every_file_it_replaces(capsys: Any) -> None:
    from agent_explorer.samples.generate import GENERATED_FILES

    with pytest.raises(SystemExit):
        main(["samples", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name in (*GENERATED_FILES, *GOLDEN_FILES, "-wal", "-shm"):
        assert name in text, name


def test_force_writes_again_and_a_failure_half_way_leaves_the_previous_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _generate(tmp_path)
    before = {name: (tmp_path / name).read_bytes() for name in ("inbox_long.jsonl", STAMP)}
    threads = _threads(tmp_path / "samples.db")
    assert len(_generate(tmp_path, force=True)) == 1

    import agent_explorer.samples.long_run as long_run

    real = long_run.long_run_entries

    def failing(tickets: int, thread_id: str = "inbox-long") -> Any:
        yield from list(real(tickets, thread_id))[:7]
        raise OSError("disk full")

    monkeypatch.setattr(long_run, "long_run_entries", failing)
    with pytest.raises(OSError, match="disk full"):
        _generate(tmp_path, force=True)
    assert {name: (tmp_path / name).read_bytes() for name in before} == before
    assert _threads(tmp_path / "samples.db") == threads
    assert not [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name]


def test_two_processes_at_once_generate_once(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from agent_explorer.samples import ensure_samples\n"
        f"ensure_samples(sys.argv[1], tickets={TICKETS}, log=lambda m: print('WROTE'))\n"
    )
    runs = [
        subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=120)[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0]
    assert sum(out.count("WROTE") for out in outputs) == 1
    assert len(_threads(tmp_path / "samples.db")["inbox-long"]) == entries_for_tickets(TICKETS)


def test_the_samples_verb_writes_then_reports_the_folder(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agent_explorer.samples.generate as generate

    monkeypatch.setattr(generate, "LONG_RUN_TICKETS", TICKETS)
    assert main(["samples", "--dir", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == str(tmp_path) and "writing" in captured.err
    assert main(["samples", "--dir", str(tmp_path)]) == 0
    assert capsys.readouterr().err == ""  # current: nothing to do
    assert os.path.getsize(tmp_path / "samples.db") > 0
