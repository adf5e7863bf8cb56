"""How stores and machines travel to workers: store URLs that reopen the same data, machine references that
import the same machine (and a worker that imports another version refuses to run)."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
from pathlib import Path

import pytest

from agent_explorer import AgentError, SqliteEventLogStore, verify_store
from agent_explorer.fleet import MachineSpec
from agent_explorer.stores import create_in_memory_event_log_store
from agent_explorer.stores.urls import open_store, store_url

from . import machines


def test_sqlite_store_urls_reopen_the_same_file(tmp_path: Path) -> None:
    store = SqliteEventLogStore(tmp_path / "a b.db", table="runs", read_only=True)
    url = store_url(store)
    assert url == f"sqlite:///{tmp_path}/a%20b.db?table=runs&mode=ro"
    again = open_store(url)
    assert isinstance(again, SqliteEventLogStore)
    assert (again.path, again.table, again.read_only) == (store.path, "runs", True)
    assert store_url(SqliteEventLogStore(tmp_path)) == f"sqlite:///{tmp_path}/events.db"


def test_postgres_store_urls_keep_schema_table_and_libpq_options() -> None:
    pytest.importorskip("psycopg")
    from agent_explorer.stores.postgres import PostgresEventLogStore

    store = PostgresEventLogStore("postgresql://u:p@db:6543/app?sslmode=require", schema="runs", table="log")
    url = store_url(store)
    assert url == "postgresql://u:p@db:6543/app?sslmode=require&schema=runs&table=log"
    again = open_store(url)
    assert (again.dsn, again.schema, again.table) == (store.dsn, "runs", "log")  # type: ignore[attr-defined]
    with pytest.raises(AgentError, match="key=value DSN"):
        store_url(PostgresEventLogStore("host=db dbname=app"))


def test_a_memory_store_has_no_url() -> None:
    assert store_url(create_in_memory_event_log_store()) is None


def test_a_worker_refuses_a_machine_of_another_version() -> None:
    spec = MachineSpec(f"{machines.__name__}:counter", "fleet_counter", "999")
    with pytest.raises(AgentError) as caught:
        spec.load()
    assert caught.value.code == "machine-mismatch" and "version 999" in caught.value.message


def test_workers_running_other_code_stop_the_run(sqlite_fleet: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Worker processes started with another machine version in their environment import another machine:
    the run stops with the mismatch instead of reporting every thread as divergent."""
    monkeypatch.setenv("FLEET_TEST_COUNTER_VERSION", "1-hotfix")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        with pytest.raises(AgentError) as caught:
            verify_store(sqlite_fleet, machines.counter, executor=pool)
    assert caught.value.code == "machine-mismatch"
    assert "version 1-hotfix" in caught.value.message and "caller's machine is 'fleet_counter' version 1" in caught.value.message
