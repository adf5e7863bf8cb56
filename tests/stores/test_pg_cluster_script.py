"""scripts/pg_cluster.sh: a throwaway PostgreSQL cluster starts, serves the store, and stops."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from agent_explorer.stores.postgres import PostgresEventLogStore

from .conftest import make_entries

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "pg_cluster.sh"


@pytest.mark.postgres
def test_pg_cluster_script_starts_a_usable_server_and_stops_it() -> None:
    has_binaries = shutil.which("initdb") or list(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not has_binaries:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("CI=true but the PostgreSQL binaries (initdb, pg_ctl) are missing")
        pytest.skip("PostgreSQL binaries (initdb, pg_ctl) are not installed")
    directory = tempfile.mkdtemp(prefix="pg-cluster-test-")
    try:
        started = subprocess.run(["bash", str(SCRIPT), "start", directory], capture_output=True, text=True, timeout=120)
        assert started.returncode == 0, started.stderr
        dsn = started.stdout.strip()
        assert dsn.startswith("postgresql://postgres@127.0.0.1:")

        async def use() -> list[tuple[str, int]]:
            async with PostgresEventLogStore(dsn) as store:
                await store.append(thread_id="t", expected_index=0, entries=make_entries(0, 2))
                return await store.list_threads()

        assert asyncio.run(use()) == [("t", 2)]
    finally:
        stopped = subprocess.run(["bash", str(SCRIPT), "stop", directory], capture_output=True, text=True, timeout=120)
        server_gone = not (Path(directory) / "data" / "postmaster.pid").exists()
        shutil.rmtree(directory, ignore_errors=True)
    assert stopped.returncode == 0, stopped.stderr
    assert server_gone, "the server was still running after stop"
