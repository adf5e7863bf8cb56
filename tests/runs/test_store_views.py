"""`store_usage` and `store_coverage` over real stores: the explorer's own rules per thread, summed on the fleet
path, and importable without graphviz or JupyterLab."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import subprocess
import sys
import textwrap
from typing import Any

import pandas as pd
import pytest

from agent_explorer import Explorer, get_usage_from_events, store_coverage, store_usage
from agent_explorer.errors import AgentError

from . import machines
from .conftest import AGENT, PRICES, runs

OURS = [t for t, (entries, row) in runs().items() if row.status not in ("unreadable", "skipped")]
READABLE = [t for t, (_, row) in runs().items() if row.status != "unreadable"]


def logs() -> dict[str, list[dict[str, Any]]]:
    return {t: runs()[t][0] for t in OURS}  # type: ignore[misc]


def oracle_usage() -> pd.DataFrame:
    """Each thread's `ex.usage()` ledger, summed per model and state: what the store view must say."""
    frames = []
    for thread_id, entries in logs().items():
        ledger = Explorer(machines.agent, entries, prices=PRICES).usage().to_pandas()
        if ledger.empty:
            continue
        grouped = ledger.groupby(["model", "state"], sort=False).agg(
            records=("index", "size"), inputTokens=("inputTokens", "sum"), outputTokens=("outputTokens", "sum"),
            totalTokens=("totalTokens", "sum"), cost=("cost", "sum"))
        frames.append(grouped.reset_index().assign(thread_id=thread_id))
    frame = pd.concat(frames, ignore_index=True)
    return frame[["thread_id", "model", "state", "records", "inputTokens", "outputTokens", "totalTokens", "cost"]]


def test_store_usage_per_thread_model_and_state(sqlite_runs: str) -> None:
    ledger = store_usage(sqlite_runs, AGENT, threads=READABLE, prices=PRICES)
    assert (ledger.threads, ledger.skipped) == (len(OURS), 1)
    expected = get_usage_from_events(e for entries in logs().values() for e in entries)
    assert ledger.total_tokens == expected["totalTokens"] == 240
    assert ledger.totals == expected
    pd.testing.assert_frame_equal(ledger.to_pandas(), oracle_usage(), check_dtype=False)
    assert ledger.by_state().loc["reviewing", "totalTokens"] == 240
    assert ledger.by_model().loc["m1", "cost"] == pytest.approx(2 * (100 * 3.0 + 20 * 15.0) / 1e6)


def test_store_usage_on_a_process_pool_and_postgres(sqlite_runs: str, postgres_runs: str) -> None:
    here = store_usage(sqlite_runs, AGENT, threads=READABLE, prices=PRICES).to_pandas()
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        there = store_usage(sqlite_runs, AGENT, threads=READABLE, prices=PRICES, executor=pool, batch_size=2)
    pd.testing.assert_frame_equal(there.to_pandas(), here)
    pd.testing.assert_frame_equal(store_usage(postgres_runs, AGENT, threads=READABLE, prices=PRICES).to_pandas(), here)


def test_the_explorer_usage_of_a_store_is_this_view(sqlite_runs: str) -> None:
    ex = Explorer(machines.agent, logs()["a-done"], prices=PRICES)
    pd.testing.assert_frame_equal(ex.usage(store=sqlite_runs, thread_ids=READABLE).to_pandas(),
                                  store_usage(sqlite_runs, AGENT, threads=READABLE, prices=PRICES).to_pandas())


def test_an_unreadable_thread_stops_the_sum_naming_it(sqlite_runs: str) -> None:
    with pytest.raises(AgentError) as caught:
        store_usage(sqlite_runs, AGENT)
    assert caught.value.code == "usage-failed" and "i-no-init" in caught.value.message


def test_store_coverage_counts_every_thread_of_the_machine(sqlite_runs: str) -> None:
    cov = store_coverage(sqlite_runs, AGENT, threads=READABLE)
    assert cov.runs == len(OURS)
    expected = Explorer(machines.agent, logs()["a-done"]).coverage_counts(list(logs().values()))
    assert cov.states_entered == dict(expected.states) and cov.transitions_taken == dict(expected.transitions)
    assert cov.states_entered["runs_agent.sent"] == 2  # a-done and f-diverges
    assert cov.states_entered["runs_agent.drafting"] == len(OURS) - 1  # every run but b-idle asked
    assert cov.states_entered.get("runs_agent.expired", 0) == 0
    frame = cov.to_pandas()
    assert "runs_agent.expired" in set(frame.get("id", frame.index))  # never entered: still a row
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        there = store_coverage(sqlite_runs, AGENT, threads=READABLE, executor=pool, batch_size=3)
    assert there.states_entered == cov.states_entered and there.transitions_taken == cov.transitions_taken


def test_the_run_views_need_no_graphviz_or_jupyterlab(sqlite_runs: str) -> None:
    code = textwrap.dedent(f"""
        import builtins, sys
        real = builtins.__import__
        def refuse(name, *args, **kwargs):
            if name.split('.')[0] in ('graphviz', 'jupyterlab', 'notebook'):
                raise ImportError('No module named ' + repr(name))
            return real(name, *args, **kwargs)
        builtins.__import__ = refuse
        from agent_explorer import summarize_runs, find_runs, store_usage, store_coverage
        url, machine, threads = {sqlite_runs!r}, {AGENT!r}, {READABLE!r}
        print(summarize_runs(url, machine, cache=False).counts()["in-flight"],
              len(find_runs(url, machine, text="refund")),
              store_usage(url, machine, threads=threads).total_tokens,
              store_coverage(url, machine, threads=threads).runs,
              [m for m in ('graphviz', 'jupyterlab') if m in sys.modules])
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split(maxsplit=4) == ["2", "6", "240", str(len(OURS)), "[]\n"]
