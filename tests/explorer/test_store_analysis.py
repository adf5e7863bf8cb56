"""Coverage and usage over a store's threads through the fleet machinery: the same counts in-process, on a
process pool and on a Dask LocalCluster of worker processes, from a real SQLite file of the sample runs."""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_explorer import SqliteEventLogStore, get_usage_from_events, read_log
from agent_explorer.errors import AgentError
from agent_explorer.explorer import Explorer
from agent_explorer.explorer.coverage import coverage_of, coverage_of_store
from agent_explorer.runs import store_usage
from agent_explorer.samples import support_agent

LOGS = Path(__file__).resolve().parents[2] / "sample_logs"
SUPPORT = ["support_clean", "support_crashed", "support_divergent", "support_ignored", "support_whatif"]
PRICES = {"scripted/large": {"input": 3.0, "output": 15.0}}  # scripted/small stays unpriced


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, list[dict[str, Any]]]]]:
    """The support runs and a run of another machine (research) in a SQLite file: (URL, support logs by thread)."""
    path = tmp_path_factory.mktemp("analysis") / "runs.db"
    logs = {name: read_log(LOGS / f"{name}.jsonl") for name in SUPPORT}

    async def build() -> None:
        store = SqliteEventLogStore(path)
        try:
            for name, entries in logs.items():
                await store.append(thread_id=name, expected_index=0, entries=entries)
            await store.append(thread_id="research", expected_index=0, entries=read_log(LOGS / "research_race.jsonl"))
        finally:
            await store.aclose()

    asyncio.run(build())
    yield f"sqlite:///{path}", logs


@pytest.fixture(scope="module")
def executors() -> Iterator[dict[str, concurrent.futures.Executor | None]]:
    distributed = pytest.importorskip("distributed")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool, \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                     silence_logs=50) as cluster, distributed.Client(cluster) as client:
        yield {"in-process": None, "process-pool": pool, "dask": client.get_executor()}


def test_store_coverage_is_the_same_on_every_executor(sample_store: Any, executors: Any) -> None:
    url, logs = sample_store
    expected = coverage_of(support_agent, list(logs.values()))  # the same logs, folded here one by one
    for name, executor in executors.items():
        cov = coverage_of_store(url, support_agent, executor=executor, batch_size=2)
        assert (cov.runs, cov.entries) == (len(SUPPORT), sum(map(len, logs.values()))), name
        assert cov.states == expected.states and cov.transitions == expected.transitions, name
        assert cov.never_taken() == expected.never_taken()


def test_explorer_coverage_of_a_store_on_an_executor(sample_store: Any, executors: Any) -> None:
    url, logs = sample_store
    ex = Explorer(support_agent, logs["support_clean"])
    here = ex.coverage(store=url)
    there = ex.coverage(store=url, executor=executors["process-pool"])
    assert here.equals(there) and here.attrs == there.attrs == {"runs": len(SUPPORT), "entries": there.attrs["entries"]}
    assert ex.coverage_data["source"] == "store" and ex.coverage_data["runs"] == len(SUPPORT)


def test_store_usage_sums_every_thread_per_model_on_every_executor(sample_store: Any, executors: Any) -> None:
    url, logs = sample_store
    expected = get_usage_from_events(entry for entries in logs.values() for entry in entries)
    assert expected["totalTokens"] > 0
    reports = [store_usage(url, support_agent, prices=PRICES, executor=e, batch_size=2)
               for e in executors.values()]
    for report in reports:
        assert (report.threads, report.skipped) == (len(SUPPORT), 1)  # the research run is another machine
        totals = report.totals
        for key in ("inputTokens", "outputTokens", "totalTokens"):
            assert totals[key] == expected[key]
            assert {m: t[key] for m, t in totals["byModel"].items()} == {
                m: t[key] for m, t in expected["byModel"].items()}
        assert [row["thread_id"] for row in report.rows] == sorted(row["thread_id"] for row in report.rows)
    assert reports[0].rows == reports[1].rows == reports[2].rows
    priced = [row for row in reports[0].rows if row["model"] in PRICES]
    assert priced and all(row["cost"] == pytest.approx(3.0 * row["inputTokens"] / 1e6 + 15.0 * row["outputTokens"] / 1e6)
                          for row in priced)
    unpriced = [row for row in reports[0].rows if row["model"] not in PRICES]
    assert unpriced and all(row["cost"] is None for row in unpriced)  # an unpriced model has no cost, not 0
    frame = reports[0].by_model()
    assert frame.loc["scripted/small", "totalTokens"] == expected["byModel"]["scripted/small"]["totalTokens"]


def test_explorer_usage_of_a_store_uses_its_prices(sample_store: Any, executors: Any) -> None:
    url, logs = sample_store
    ex = Explorer(support_agent, logs["support_clean"], prices=PRICES)
    report = ex.usage(store=url, executor=executors["dask"])
    assert report.threads == len(SUPPORT) and report.cost_usd is not None and report.cost_usd > 0
    assert report.cost_usd == pytest.approx(store_usage(url, support_agent, prices=PRICES).cost_usd)


def test_a_thread_that_cannot_be_folded_is_named(tmp_path: Path) -> None:
    entries = read_log(LOGS / "support_clean.jsonl")
    headless = [{**entry, "index": n} for n, entry in enumerate(entries[1:])]  # its @agent.init is gone

    async def build() -> None:
        store = SqliteEventLogStore(tmp_path / "broken.db")
        try:
            await store.append(thread_id="fine", expected_index=0, entries=entries)
            await store.append(thread_id="headless", expected_index=0, entries=headless)
        finally:
            await store.aclose()

    asyncio.run(build())
    with pytest.raises(AgentError) as caught:
        coverage_of_store(f"sqlite:///{tmp_path}/broken.db", support_agent)
    assert caught.value.code == "coverage-failed" and "'headless'" in caught.value.message
    assert coverage_of_store(f"sqlite:///{tmp_path}/broken.db", support_agent, thread_ids=["fine"]).runs == 1
    with pytest.raises(AgentError) as missing:
        coverage_of_store(f"sqlite:///{tmp_path}/missing.db", support_agent)
    assert missing.value.code == "file-not-found" and not (tmp_path / "missing.db").exists()


def test_store_usage_totals_are_get_usage_from_events_summed_over_the_threads(tmp_path: Path) -> None:
    """Every numeric usage field (nested ones too), and byModel exactly as the log package defines it."""
    def enriched(entries: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
        out = []
        for n, entry in enumerate(entries):
            event = entry["event"]
            if event["type"] == "@agent.usage":
                usage = {**event["usage"], "reasoningTokens": seed + n, "inputTokenDetails": {"cacheReadTokens": n}}
                event = {**event, "usage": usage}
                if n == 3:  # a record without a model, and without totalTokens (derived: input + output)
                    event = {k: v for k, v in event.items() if k != "model"}
                    event["usage"] = {k: v for k, v in usage.items() if k != "totalTokens"}
            out.append({**entry, "event": event})
        return out

    logs = {name: enriched(read_log(LOGS / f"{name}.jsonl"), seed) for seed, name in enumerate(SUPPORT[:3])}

    async def build() -> None:
        store = SqliteEventLogStore(tmp_path / "usage.db")
        try:
            for name, entries in logs.items():
                await store.append(thread_id=name, expected_index=0, entries=entries)
        finally:
            await store.aclose()

    asyncio.run(build())
    report = store_usage(f"sqlite:///{tmp_path}/usage.db", support_agent, prices=PRICES)
    expected = get_usage_from_events(entry for entries in logs.values() for entry in entries)
    assert expected["reasoningTokens"] > 0 and expected["inputTokenDetails"]["cacheReadTokens"] > 0
    assert report.totals == expected
    assert "(unknown)" not in report.totals["byModel"]
    records = sum(1 for entries in logs.values() for e in entries if e["event"]["type"] == "@agent.usage")
    assert sum(row["records"] for row in report.rows) == records, "the rows still count every record"
    assert sum(row["totalTokens"] for row in report.rows) == expected["totalTokens"]
