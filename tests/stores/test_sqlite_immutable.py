"""What a read of a SQLite store leaves behind, and `immutable` reads that leave nothing.

A read-only read of a WAL-mode file never changes the file, but SQLite creates an empty `-wal` and a `-shm` beside
it, so it cannot read a copy on read-only media at all; `?immutable=1` (SQLite's `immutable` URI parameter) reads
it creating nothing. The read-only folder is real: a read-only bind mount (as root, in a private mount namespace)
or a folder without write permission (as any other user).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_explorer.stores.sqlite import SqliteEventLogStore
from agent_explorer.stores.urls import open_store, store_url

from .conftest import make_entries

READER = """
import json, sys
from agent_explorer.errors import AgentError
from agent_explorer.stores import open_store
out = {}
for name, url in (("ro", sys.argv[1] + "?mode=ro"), ("immutable", sys.argv[1] + "?immutable=1")):
    store = open_store(url)
    try:
        out[name] = {"entries": len(store.sync.read("t"))}
    except AgentError as error:
        out[name] = {"error": error.code, "message": error.message}
    finally:
        store.sync.close()
print(json.dumps(out))
"""


def _wal_store(path: Path) -> bytes:
    store = SqliteEventLogStore(path)
    store.sync.append(thread_id="t", expected_index=0, entries=make_entries(0, 5))
    store.sync.close()
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # checkpointed on close: no -wal left
    with open(path, "rb") as handle:
        header = handle.read(20)
    assert header[18:20] == b"\x02\x02"  # the file itself says WAL mode
    return path.read_bytes()


def test_a_read_only_read_leaves_wal_and_shm_beside_the_file_and_an_immutable_one_nothing(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    before = _wal_store(path)
    store = open_store(f"sqlite:///{path}?mode=ro")
    assert len(store.sync.read("t")) == 5
    store.sync.close()
    assert path.read_bytes() == before  # the main file never changes...
    sides = {p.name: p.stat().st_size for p in tmp_path.iterdir() if p != path}
    assert set(sides) == {"runs.db-wal", "runs.db-shm"} and sides["runs.db-wal"] == 0  # ...but SQLite leaves these
    for side in sides:
        (tmp_path / side).unlink()
    store = open_store(f"sqlite:///{path}?immutable=1")
    assert isinstance(store, SqliteEventLogStore) and store.immutable and store.read_only
    assert store_url(store) == f"sqlite:///{path}?mode=ro&immutable=1"  # a worker reopens it the same way
    assert len(store.sync.read("t")) == 5
    store.sync.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.db"] and path.read_bytes() == before


def test_an_immutable_read_of_a_copy_on_a_read_only_folder(tmp_path: Path) -> None:
    source, mount = tmp_path / "media", tmp_path / "mnt"
    source.mkdir()
    mount.mkdir()
    before = _wal_store(source / "copy.db")
    if os.geteuid() == 0:  # root writes through permissions: mount the folder read-only in a namespace of its own
        if shutil.which("unshare") is None:
            pytest.skip("needs unshare(1) to mount a read-only folder as root")
        probe = subprocess.run(["unshare", "-m", "sh", "-c", f"mount --bind -o ro '{source}' '{mount}'"],
                               capture_output=True, text=True)
        if probe.returncode != 0:
            pytest.skip(f"cannot make a read-only mount here: {probe.stderr.strip()}")
        folder = mount
        script = (f"mount --bind -o ro '{source}' '{mount}' && exec \"$0\" \"$@\"")
        command = ["unshare", "-m", "sh", "-c", script, sys.executable, "-c", READER, f"sqlite:///{folder}/copy.db"]
    else:
        folder = source
        source.chmod(0o555)
        command = [sys.executable, "-c", READER, f"sqlite:///{folder}/copy.db"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        # The ordinary read-only open cannot read a WAL file where it cannot create the -shm; immutable can.
        assert result["ro"].get("error") == "store-error", result
        assert result["immutable"] == {"entries": 5}
        if os.geteuid() == 0:  # and the CLI takes the same URL
            cli = subprocess.run(
                ["unshare", "-m", "sh", "-c", script, sys.executable, "-m", "agent_explorer.cli", "show",
                 f"sqlite:///{folder}/copy.db?immutable=1#t"], capture_output=True, text=True, timeout=120)
            assert cli.returncode == 0 and "of 5 entries" in cli.stdout, cli.stdout + cli.stderr
    finally:
        source.chmod(0o755)
    assert sorted(p.name for p in source.iterdir()) == ["copy.db"] and (source / "copy.db").read_bytes() == before
