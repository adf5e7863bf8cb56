"""`summarize_runs` over real stores: every status, the columns of docs/api.md §8, the same rows on every executor."""

from __future__ import annotations

import concurrent.futures
import math
import multiprocessing
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from agent_explorer import summarize_runs
from agent_explorer.runs import COLUMNS, STATUSES, RunSummaries

from . import machines
from .conftest import AGENT, COST, PRICES, runs


def check_rows(summaries: RunSummaries, *, priced: bool = True) -> None:
    expected = runs()
    frame = summaries.to_pandas()
    assert list(frame.index) == list(expected)  # thread order
    assert frame.index.name == "thread_id"
    assert list(frame.columns) == list(COLUMNS)
    for thread_id, (entries, row) in expected.items():
        got = frame.loc[thread_id]
        assert got["status"] == row.status, thread_id
        if row.status == "unreadable":
            assert row.error is not None and row.error in got["error"], (thread_id, got["error"])
            assert got["verified"] is None
            continue
        assert pd.isna(got["error"]), thread_id
        assert isinstance(entries, list)
        assert got["entries"] == len(entries)
        assert got["first_recorded"] == pd.Timestamp(entries[0]["recordedAt"])
        assert got["last_recorded"] == pd.Timestamp(entries[-1]["recordedAt"])
        assert got["first_recorded"].tzinfo is not None
        assert got["machine_id"] == entries[0]["machineId"] and got["version"] == entries[0]["machineVersion"]
        assert got["state"] == row.state, thread_id
        assert got["owed"] == row.owed, thread_id
        assert got["verified"] is row.verified, thread_id
        assert (None if pd.isna(got["divergent_index"]) else got["divergent_index"]) == row.divergent_index
        assert got["total_tokens"] == row.total_tokens, thread_id
        if not priced or row.status == "skipped":
            assert math.isnan(got["cost_usd"])
        else:
            assert got["cost_usd"] == pytest.approx(COST if row.total_tokens else 0.0)


def expected_counts() -> dict[str, int]:
    counts = dict.fromkeys(STATUSES, 0)
    for _, row in runs().values():
        counts[row.status] += 1
    return counts


def test_every_status_and_column_on_sqlite(sqlite_runs: str) -> None:
    summaries = summarize_runs(sqlite_runs, AGENT, prices=PRICES, cache=False)
    check_rows(summaries)
    assert summaries.counts() == expected_counts()
    assert all(summaries.counts()[status] for status in STATUSES)  # the store holds every fate
    assert [row.thread_id for row in summaries] == list(runs())
    assert summaries["c-in-flight"].status == "in-flight"


def test_without_prices_cost_is_nan(sqlite_runs: str) -> None:
    check_rows(summarize_runs(sqlite_runs, AGENT, cache=False), priced=False)


def test_a_model_without_a_price_makes_the_cost_nan(sqlite_runs: str) -> None:
    frame = summarize_runs(sqlite_runs, AGENT, prices={"other-model": {"input": 1.0, "output": 1.0}},
                           cache=False).to_pandas()
    assert math.isnan(frame.loc["a-done", "cost_usd"])  # m1 has no price
    assert frame.loc["b-idle", "cost_usd"] == 0.0  # nothing was spent


def test_every_status_on_postgres(postgres_runs: str) -> None:
    summaries = summarize_runs(postgres_runs, AGENT, prices=PRICES, cache=False)
    check_rows(summaries)
    assert summaries.counts() == expected_counts()


def test_rows_arrive_batch_by_batch_with_progress(sqlite_runs: str) -> None:
    batches: list[list[str]] = []
    ticks: list[tuple[int, int | None]] = []
    threads = list(runs())
    summaries = summarize_runs(sqlite_runs, AGENT, threads=threads, batch_size=3, cache=False,
                               on_rows=lambda rows: batches.append([r.thread_id for r in rows]),
                               progress=lambda done, total: ticks.append((done, total)))
    assert batches == [threads[i : i + 3] for i in range(0, len(threads), 3)]
    assert ticks == [(min(i + 3, len(threads)), len(threads)) for i in range(0, len(threads), 3)]
    assert summaries.thread_ids == threads


def test_progress_knows_the_store_total(sqlite_runs: str) -> None:
    ticks: list[tuple[int, int | None]] = []
    summarize_runs(sqlite_runs, AGENT, batch_size=4, cache=False, progress=lambda done, total: ticks.append((done, total)))
    assert ticks[-1] == (len(runs()), len(runs())) and all(total == len(runs()) for _, total in ticks)


def test_a_thread_recorded_by_another_version_is_folded_through_this_one(tmp_path: Path) -> None:
    from . import machines
    from .conftest import ASK, build_sqlite, record

    url = build_sqlite(tmp_path / "v2.db", {"old": (record(machines.agent_v2, [ASK], "old"), runs()["c-in-flight"][1])})
    row = summarize_runs(url, AGENT)["old"]
    assert (row.version, row.status, row.state, row.owed) == ("2", "in-flight", "drafting", 1)


def test_a_subset_of_threads_in_the_order_given(sqlite_runs: str) -> None:
    summaries = summarize_runs(sqlite_runs, AGENT, threads=["e-reviewing", "a-done", "nope"], cache=False)
    assert summaries.thread_ids == ["e-reviewing", "a-done", "nope"]
    assert summaries["nope"].status == "unreadable" and "does not exist" in (summaries["nope"].error or "")


def _spawn_pool() -> concurrent.futures.ProcessPoolExecutor:
    return concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"))


def test_the_same_rows_on_a_process_pool(sqlite_runs: str) -> None:
    here = summarize_runs(sqlite_runs, AGENT, prices=PRICES, cache=False)
    with _spawn_pool() as pool:
        there = summarize_runs(sqlite_runs, AGENT, prices=PRICES, executor=pool, batch_size=2, cache=False)
    pd.testing.assert_frame_equal(here.to_pandas(), there.to_pandas())


def test_the_same_rows_on_a_dask_cluster(postgres_runs: str) -> None:
    distributed = pytest.importorskip("distributed")
    here = summarize_runs(postgres_runs, AGENT, prices=PRICES, cache=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=50) as cluster, \
            distributed.Client(cluster) as client:
        there = summarize_runs(postgres_runs, AGENT, prices=PRICES, executor=client.get_executor(), batch_size=3,
                               cache=False)
    pd.testing.assert_frame_equal(here.to_pandas(), there.to_pandas())


def test_json_rows_name_every_column(sqlite_runs: str) -> None:
    rows: list[dict[str, Any]] = summarize_runs(sqlite_runs, AGENT, cache=False).to_json()
    assert list(rows[0]) == ["thread_id", *COLUMNS]
    assert rows[0]["cost_usd"] is None  # NaN is not JSON


@pytest.mark.parametrize("buffer", [0, 2, 4096])
def test_the_ledger_started_late_owes_what_it_owes_when_run_along(sqlite_runs: str, buffer: int,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # The ledger of a thread that ends done is never stepped; past the buffer it runs along. Either way the rows
    # are those of a ledger stepped from the first entry (buffer 0).
    import agent_explorer.runs.row as row_module

    monkeypatch.setattr(row_module, "LEDGER_BUFFER", 0)
    along = summarize_runs(sqlite_runs, AGENT, cache=False).to_pandas()
    monkeypatch.setattr(row_module, "LEDGER_BUFFER", buffer)
    pd.testing.assert_frame_equal(summarize_runs(sqlite_runs, AGENT, cache=False).to_pandas(), along)
    assert (along["owed"] > 0).any()


def test_an_unreadable_row_says_why_in_text_a_terminal_cannot_act_on(tmp_path: Path) -> None:
    from . import machines
    from .conftest import build_sqlite, record

    hostile = record(machines.agent, [{"type": "ASK", "question": "x"}], "z")[1:]
    hostile[0]["index"] = 0
    hostile[0]["event"]["type"] = "\x1b[2J\u202eASK\x07"  # clears the screen, flips the text, rings the bell
    url = build_sqlite(tmp_path / "hostile.db", {"z": (hostile, runs()["i-no-init"][1])})
    row = summarize_runs(url, AGENT)["z"]
    assert row.status == "unreadable" and row.error is not None and "log-format" in row.error
    assert row.error.isprintable() and "\x1b" not in row.error and "\u202e" not in row.error


def test_folding_here_never_looks_for_the_machine_s_import_path(sqlite_runs: str, monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    # In this process the batches fold with the machine object itself: its 'module:attr' is not needed, and
    # finding it walks every loaded module (40-140 ms in a notebook), on each fold of a followed run list.
    from agent_explorer.eventlog import machine_ref

    looked: list[object] = []
    original = machine_ref.find_machine_ref

    def counting(machine: object) -> str | None:
        looked.append(machine)
        return original(machine)

    monkeypatch.setattr(machine_ref, "find_machine_ref", counting)
    monkeypatch.setattr("agent_explorer.fleet.refs.find_machine_ref", counting)
    rows = summarize_runs(sqlite_runs, machines.agent, threads=["a-done"])
    assert rows["a-done"].status == "done" and looked == []
