"""verify_store over a real SQLite file and the PostgreSQL server, in-process, on a process pool and on a Dask
LocalCluster of worker processes: the same report, in thread order, whatever ran it."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_explorer import AgentError, SqliteEventLogStore, verify_store
from agent_explorer.fleet import FleetReport
from agent_explorer.stores import create_in_memory_event_log_store

from . import machines
from .conftest import expected_for, fill, fleet_threads, record

EXECUTORS = ["in-process", "process-pool", "dask"]


@pytest.fixture(scope="module")
def process_pool() -> Iterator[concurrent.futures.Executor]:
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool


@pytest.fixture(scope="module")
def dask_client() -> Iterator[Any]:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=50
    ) as cluster, distributed.Client(cluster) as client:
        yield client


def executor_for(name: str, request: pytest.FixtureRequest) -> concurrent.futures.Executor | None:
    if name == "in-process":
        return None
    if name == "process-pool":
        executor: concurrent.futures.Executor = request.getfixturevalue("process_pool")
        return executor
    return request.getfixturevalue("dask_client").get_executor()  # type: ignore[no-any-return]


def assert_matches_the_fleet(report: FleetReport, *, ignore_version: bool = False) -> None:
    """Every thread has exactly the outcome the fleet says, in thread-id order."""
    ids = list(fleet_threads())
    assert [o.thread_id for o in report.outcomes] == sorted(ids)
    for outcome in report.outcomes:
        expected = expected_for(outcome.thread_id, ignore_version=ignore_version)
        assert outcome.outcome == expected.outcome, (outcome.thread_id, outcome)
        if expected.outcome == "divergent":
            assert (outcome.index, outcome.kind, outcome.event_type) == (expected.index, expected.kind, expected.event_type)
        if expected.outcome in ("ok", "divergent"):
            assert outcome.unverified == expected.unverified, outcome
            assert bool(outcome.run_state) == expected.unfinished, outcome
    divergent = {d.thread_id: (d.index, d.kind, d.event_type) for d in report.divergent}
    assert divergent["b-tampered-hash"] == (3, "state", "INC")
    assert divergent["c-tampered-payload"] == (2, "state", "STOP")
    assert report.skipped == 1 and [o.thread_id for o in report.skipped_threads] == ["d-other-machine"]
    assert report.ok is False


@pytest.mark.parametrize("executor_name", EXECUTORS)
def test_a_sqlite_fleet_is_verified_the_same_on_every_executor(
    sqlite_fleet: str, executor_name: str, request: pytest.FixtureRequest
) -> None:
    executor = executor_for(executor_name, request)
    report = verify_store(sqlite_fleet, machines.counter, executor=executor, batch_size=4)
    assert_matches_the_fleet(report)
    errors = {e.thread_id: e.message for e in report.errors}
    assert set(errors) == {"e-no-init", "f-malformed", "h-version-2"}
    assert "could not read the thread" in errors["f-malformed"]
    assert "missing-init-entry" in errors["e-no-init"] or "@agent.init" in errors["e-no-init"]
    assert "ignore_version=True" in errors["h-version-2"]
    # The threads around the bad ones were all checked: one bad thread never stops the rest.
    clean = [name for name in fleet_threads() if expected_for(name).outcome in ("ok", "divergent")]
    assert report.threads_checked == len(clean)
    assert report.entries_checked == sum(o.entries for o in report.outcomes if o.outcome in ("ok", "divergent"))
    assert report.unverified == 1 and report.hashes_checked == report.entries_checked - 1
    assert len(report.unfinished) == 4


@pytest.mark.postgres
@pytest.mark.parametrize("executor_name", EXECUTORS)
def test_a_postgres_fleet_is_verified_the_same_on_every_executor(
    postgres_fleet: str, executor_name: str, request: pytest.FixtureRequest
) -> None:
    executor = executor_for(executor_name, request)
    report = verify_store(postgres_fleet, machines.counter, executor=executor, batch_size=3)
    assert_matches_the_fleet(report)
    assert {e.thread_id for e in report.errors} == {"e-no-init", "f-malformed", "h-version-2"}
    assert report.store.startswith("postgresql://") and "schema=" in report.store


def test_reports_are_equal_across_executors(sqlite_fleet: str, request: pytest.FixtureRequest) -> None:
    reports = [
        verify_store(sqlite_fleet, machines.counter, executor=executor_for(name, request), batch_size=5)
        for name in EXECUTORS
    ]
    assert reports[0] == reports[1] == reports[2]
    assert reports[0].to_json() == reports[1].to_json() == reports[2].to_json()
    assert reports[0].to_pandas().equals(reports[2].to_pandas())


def test_ignore_version_folds_old_versions_through_this_machine(sqlite_fleet: str, request: pytest.FixtureRequest) -> None:
    for name in ("in-process", "process-pool"):
        report = verify_store(sqlite_fleet, machines.counter, executor=executor_for(name, request), ignore_version=True)
        assert_matches_the_fleet(report, ignore_version=True)
        assert {e.thread_id for e in report.errors} == {"e-no-init", "f-malformed"}


def test_a_worker_killed_mid_run_leaves_the_report_unchanged(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """A CRASH event makes the first worker process that folds it SIGKILL itself mid-batch; Dask's nanny
    restarts the worker, the scheduler reruns the batch elsewhere, and the report equals the in-process one."""
    client = request.getfixturevalue("dask_client")
    marker = tmp_path / "killed"
    path = tmp_path / "crash.db"
    threads = {name: value for name, value in fleet_threads().items() if not isinstance(value[0], str)}
    marker.write_text("recording", encoding="utf-8")  # recording folds the guard too: no kill then
    threads["m-crash"] = (record(machines.counter, [{"type": "INC"}, {"type": "CRASH", "marker": str(marker)}], "m"), None)  # type: ignore[assignment]
    marker.unlink()

    import asyncio

    async def build() -> None:
        store = SqliteEventLogStore(path)
        try:
            await fill(store, threads)
        finally:
            await store.aclose()

    asyncio.run(build())
    pids_before = set(client.run(lambda: __import__("os").getpid()).values())
    report = verify_store(f"sqlite:///{path}", machines.counter, executor=client.get_executor(), batch_size=2)
    killed_pid = int(marker.read_text(encoding="utf-8"))
    assert killed_pid in pids_before  # a worker really died mid-batch
    client.wait_for_workers(2, timeout=60)
    assert killed_pid not in set(client.run(lambda: __import__("os").getpid()).values())
    reference = verify_store(f"sqlite:///{path}", machines.counter)  # the marker exists now: no kill
    assert report == reference
    crash = next(o for o in report.outcomes if o.thread_id == "m-crash")
    assert crash.outcome == "ok" and crash.entries == 3


def test_threads_are_paged_and_can_be_named(sqlite_fleet: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_explorer.fleet import runner

    monkeypatch.setattr(runner, "PAGE_SIZE", 3)  # several list_threads pages for 19 threads
    pages: list[int] = []
    real = SqliteEventLogStore.list_threads

    async def counting(self: Any, *, limit: int = 100, offset: int = 0) -> Any:
        pages.append(offset)
        return await real(self, limit=limit, offset=offset)

    monkeypatch.setattr(SqliteEventLogStore, "list_threads", counting)
    report = verify_store(sqlite_fleet, machines.counter, batch_size=2)
    assert len(report.outcomes) == len(fleet_threads()) and pages == list(range(0, 3 * len(pages), 3))
    assert len(pages) == len(fleet_threads()) // 3 + 1
    named = verify_store(sqlite_fleet, machines.counter, threads=["c-tampered-payload", "a-clean-01", "nope"])
    assert [(o.thread_id, o.outcome) for o in named.outcomes] == [
        ("c-tampered-payload", "divergent"), ("a-clean-01", "ok"), ("nope", "error")]
    assert "empty or does not exist" in named.errors[0].message


def test_progress_reports_threads_done(sqlite_fleet: str) -> None:
    seen: list[tuple[int, int | None]] = []
    verify_store(sqlite_fleet, machines.counter, batch_size=7, progress=lambda done, total: seen.append((done, total)))
    n = len(fleet_threads())
    assert [done for done, _ in seen] == [7, 14, n] and {total for _, total in seen} == {None}
    seen.clear()
    verify_store(sqlite_fleet, machines.counter, threads=["a-clean-00", "a-clean-01"], progress=lambda d, t: seen.append((d, t)))
    assert seen == [(2, 2)]


def test_a_store_object_travels_as_its_url(sqlite_fleet: str, process_pool: concurrent.futures.Executor) -> None:
    from agent_explorer.stores.urls import sqlite_path

    store = SqliteEventLogStore(sqlite_path(sqlite_fleet), read_only=True)
    report = verify_store(store, machines.counter, executor=process_pool)
    assert_matches_the_fleet(report)
    assert report.outcomes == verify_store(sqlite_fleet, machines.counter).outcomes
    assert report.store == sqlite_fleet  # named by its URL (the read-only mode it was opened in aside)


def test_a_machine_without_importable_reference_is_refused_by_name(
    sqlite_fleet: str, process_pool: concurrent.futures.Executor
) -> None:
    local = machines._counter("1", 5)  # built here, bound to no module attribute
    with pytest.raises(AgentError) as caught:
        verify_store(sqlite_fleet, local, executor=process_pool)
    assert caught.value.code == "machine-not-importable"
    assert "fleet_counter" in caught.value.message and "module:attr" in caught.value.message
    # In-process it needs no reference: the caller's own object is used.
    assert verify_store(sqlite_fleet, local).threads_checked == verify_store(sqlite_fleet, machines.counter).threads_checked


def test_a_machine_can_be_named_by_reference(sqlite_fleet: str, process_pool: concurrent.futures.Executor) -> None:
    ref = f"{machines.__name__}:counter"
    by_ref = verify_store(sqlite_fleet, ref, executor=process_pool)
    assert by_ref == verify_store(sqlite_fleet, machines.counter)


def test_a_memory_store_runs_in_process_only() -> None:
    import asyncio

    store = create_in_memory_event_log_store()
    asyncio.run(store.append(thread_id="t", expected_index=0, entries=record(machines.counter, [{"type": "INC"}], "t")))
    assert verify_store(store, machines.counter).threads_checked == 1
    with concurrent.futures.ThreadPoolExecutor(2) as threads:
        assert verify_store(store, machines.counter, executor=threads).ok
    with concurrent.futures.ProcessPoolExecutor(1) as pool, pytest.raises(AgentError, match="in-memory store"):
        verify_store(store, machines.counter, executor=pool)


def test_bad_arguments_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(AgentError, match="no such SQLite store"):
        verify_store(f"sqlite:///{tmp_path}/missing.db", machines.counter)
    assert not (tmp_path / "missing.db").exists()  # reading never creates a database
    with pytest.raises(AgentError, match="batch_size"):
        verify_store(f"sqlite:///{tmp_path}/missing.db", machines.counter, batch_size=0)
    with pytest.raises(AgentError, match="one str"):
        verify_store("memory:", machines.counter, threads="t1")


def test_a_broken_pool_is_a_named_error(sqlite_fleet: str) -> None:
    """A pool whose worker dies (no rescheduling there) ends the run with an error naming the batch."""
    import os
    import signal

    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        os.kill(pool.submit(os.getpid).result(), signal.SIGKILL)
        with pytest.raises(AgentError) as caught:
            verify_store(sqlite_fleet, machines.counter, executor=pool)
    assert caught.value.code == "fleet-task-failed" and "BrokenProcessPool" in caught.value.message
