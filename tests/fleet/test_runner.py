"""The generic fleet machinery with a task of its own: batches in thread order on any executor, sizes chosen
so small fleets still spread over every worker."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os

import pytest

from agent_explorer import AgentError
from agent_explorer.fleet import map_batches
from agent_explorer.fleet.runner import MAX_AUTO_BATCH, auto_batch_size

from . import machines, tasks
from .conftest import fleet_threads


def test_auto_batch_size_spreads_small_fleets_and_caps_large_ones() -> None:
    assert auto_batch_size(20, 2) == 3 and auto_batch_size(1, 8) == 1
    assert auto_batch_size(5000, 2) == MAX_AUTO_BATCH and auto_batch_size(5000, 32) == 40


def test_a_task_of_its_own_runs_in_thread_order_in_worker_processes(sqlite_fleet: str) -> None:
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        results = list(map_batches(tasks.entry_counts, sqlite_fleet, machines.counter, executor=pool))
    ids = [thread_id for batch, _ in results for thread_id in batch]
    assert ids == sorted(fleet_threads())
    n = len(fleet_threads())
    assert n == 19 and [len(batch) for batch, _ in results] == [3] * 6 + [1]  # 2 workers: ~4 tasks each
    rows = [row for _, rows in results for row in rows]
    assert [row[0] for row in rows] == ids
    counts = dict((thread_id, n) for thread_id, n, _ in rows)
    assert counts["f-malformed"] == -1 and counts["b-tampered-hash"] == 5
    assert os.getpid() not in {pid for _, _, pid in rows}  # read in the workers, not here


def test_a_task_must_be_importable() -> None:
    async def local(context: object, ids: object) -> None:
        return None

    with pytest.raises(AgentError, match="top level of an importable module"):
        list(map_batches(local, "memory:", machines.counter))  # type: ignore[arg-type]
