"""run_agent on PostgreSQL, the multi-host store: two hosts (separate pools) resuming one thread,
and a resume after a crash, against a real server (AGENT_EXPLORER_TEST_PG_DSN)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_explorer.errors import AgentEventLogConflictError
from agent_explorer.eventlog.replay import replay
from agent_explorer.runtime import ScriptedModel, run_agent

from .conftest import RacingHosts, pg_dsn
from .machines import FULL_INPUT, approval_machine, full_machine, full_model

pytestmark = pytest.mark.postgres


async def test_two_hosts_on_postgres_resolve_to_one_winner(pg_schema: str) -> None:
    from agent_explorer.stores import PostgresEventLogStore

    dsn = pg_dsn()
    host_a, host_b = PostgresEventLogStore(dsn, schema=pg_schema), PostgresEventLogStore(dsn, schema=pg_schema)
    try:
        first = await run_agent(approval_machine, input={"q": "hi"}, store=host_a, thread_id="t",
                                executors=ScriptedModel(["r"]))
        models = [ScriptedModel(["a"]), ScriptedModel(["b"])]
        race = RacingHosts(2)
        results = await asyncio.gather(
            *(
                run_agent(approval_machine, store=race.wrap(host), thread_id="t", event={"type": "REJECT"}, executors=model)
                for host, model in ((host_a, models[0]), (host_b, models[1]))
            )
        )
        losers = [i for i, r in enumerate(results) if r.cause == "journal"]
        assert len(losers) == 1, [(r.status, r.cause) for r in results]
        loser = results[losers[0]]
        assert isinstance(loser.error, AgentEventLogConflictError)
        assert models[losers[0]].calls == []  # its write failed before any call could start
        log = await host_b.read("t")
        assert [e["index"] for e in log] == list(range(len(log)))
        assert log[: len(first.events)] == first.events
        replay(approval_machine, log, verify="strict")
    finally:
        await host_a.aclose()
        await host_b.aclose()


@pytest.mark.parametrize("cut", [1, 4, 9])
async def test_a_cut_log_on_postgres_resumes_to_the_same_end(pg_schema: str, cut: int) -> None:
    from agent_explorer.stores import PostgresEventLogStore

    reference = await run_agent(full_machine, input=FULL_INPUT, executors=full_model(), timers="run", time_scale=0.001)
    store = PostgresEventLogStore(pg_dsn(), schema=pg_schema)
    try:
        await store.append(thread_id="t", expected_index=0, entries=reference.events[:cut])
        resumed = await run_agent(full_machine, store=store, thread_id="t", executors=full_model(),
                                  timers="run", time_scale=0.001)
        assert resumed.status == "done" and resumed.output == reference.output
        stored: list[dict[str, Any]] = await store.read("t")
        assert stored == resumed.events and stored[:cut] == reference.events[:cut]
    finally:
        await store.aclose()
