"""Write-ahead journaling (docs/semantics/runtime.md "Write-ahead journaling"): a rejected append stops the run before
any further call, and two hosts resuming one thread resolve to exactly one winner."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_explorer.errors import AgentEventLogConflictError, AgentStoreError
from agent_explorer.eventlog.replay import replay
from agent_explorer.runtime import ScriptedModel, run_agent
from agent_explorer.runtime.executors import AgentRequest

from .conftest import FailingStore, RacingHosts
from .machines import FULL_INPUT, approval_machine, full_machine, full_model

RUN = {"timers": "run", "time_scale": 0.001}


class TracedModel(ScriptedModel):
    """The full run's scripted model, writing each call start into a shared trace."""

    def __init__(self, trace: list[tuple[str, Any]]) -> None:
        base = full_model()
        self.__dict__.update(base.__dict__)
        self.trace = trace

    async def generate_text(self, request: AgentRequest) -> dict[str, Any]:
        self.trace.append(("call", request.request_id))
        return await super().generate_text(request)

    async def decide(self, request: AgentRequest) -> dict[str, Any]:
        self.trace.append(("call", request.request_id))
        return await super().decide(request)


def _appends_of_a_full_run() -> int:
    result = asyncio.run(run_agent(full_machine, input=FULL_INPUT, executors=full_model(), **RUN))
    return len(result.events)


APPENDS = _appends_of_a_full_run()


async def test_every_call_starts_only_after_every_earlier_entry_is_durable() -> None:
    trace: list[tuple[str, Any]] = []
    store = FailingStore(fail_at=0, trace=trace)
    result = await run_agent(full_machine, input=FULL_INPUT, store=store, thread_id="t", executors=TracedModel(trace), **RUN)
    assert result.status == "done"
    for position, (kind, _) in enumerate(trace):
        if kind == "call":
            written = [i for k, i in trace[:position] if k == "appended"]
            # Entries accepted before the call are exactly those durable before it: no gap, no lag.
            assert written == list(range(len(written)))
    assert [i for k, i in trace if k == "appended"] == list(range(APPENDS))


@pytest.mark.parametrize("fail_at", range(1, APPENDS + 1))
async def test_a_rejected_append_settles_error_journal_and_no_call_starts_after_it(fail_at: int) -> None:
    trace: list[tuple[str, Any]] = []
    store = FailingStore(fail_at=fail_at, trace=trace)
    model = TracedModel(trace)
    result = await run_agent(full_machine, input=FULL_INPUT, store=store, thread_id="t", executors=model, **RUN)
    await result.drain()  # never raises, even after the failure

    assert result.status == "error" and result.cause == "journal"
    assert isinstance(result.error, AgentStoreError)
    failed_at = trace.index(("append-failed", fail_at - 1))
    assert [k for k, _ in trace[failed_at + 1 :] if k == "call"] == [], trace[failed_at:]
    # The thread holds exactly the durable prefix, and the result reports that prefix.
    stored = await store.read("t")
    assert [e["index"] for e in stored] == list(range(fail_at - 1))
    assert result.events == stored


async def test_two_hosts_resuming_one_thread_resolve_to_one_winner(tmp_path: Any) -> None:
    from agent_explorer.stores import SqliteEventLogStore

    path = str(tmp_path / "shared.db")
    setup_store = SqliteEventLogStore(path)
    first = await run_agent(approval_machine, input={"q": "hi"}, store=setup_store, thread_id="t",
                            executors=ScriptedModel(["r"]))
    assert first.status == "idle"
    await setup_store.aclose()

    # Two hosts, each with its own connection to the same database file, resume concurrently.
    host_a, host_b = SqliteEventLogStore(path), SqliteEventLogStore(path)
    try:
        race = RacingHosts(2)  # both hosts read the thread before either appends
        results = await asyncio.gather(
            run_agent(approval_machine, store=race.wrap(host_a), thread_id="t", event={"type": "APPROVE", "note": "a"}),
            run_agent(approval_machine, store=race.wrap(host_b), thread_id="t", event={"type": "REJECT"},
                      executors=ScriptedModel(["second draft"])),
        )
        outcomes = sorted((r.status, r.cause) for r in results)
        winners = [r for r in results if r.cause != "journal"]
        losers = [r for r in results if r.cause == "journal"]
        assert len(winners) == 1 and len(losers) == 1, outcomes
        assert isinstance(losers[0].error, AgentEventLogConflictError)
        log = await host_a.read("t")
        assert [e["index"] for e in log] == list(range(len(log)))
        assert log == winners[0].events
        replay(approval_machine, log, verify="strict")
        # The loser never called its model: its append failed before any call could start.
        assert losers[0].events == log[: len(first.events)]
    finally:
        await host_a.aclose()
        await host_b.aclose()


async def test_two_hosts_on_the_reference_store_as_well() -> None:
    from agent_explorer.stores import create_in_memory_event_log_store

    store = create_in_memory_event_log_store()
    await run_agent(approval_machine, input={"q": "hi"}, store=store, thread_id="t", executors=ScriptedModel(["r"]))
    models = [ScriptedModel(["x"]), ScriptedModel(["y"])]
    race = RacingHosts(2)
    results = await asyncio.gather(
        *(run_agent(approval_machine, store=race.wrap(store), thread_id="t", event={"type": "REJECT"}, executors=m)
          for m in models)
    )
    assert sorted(r.cause or "ok" for r in results) == ["journal", "ok"]
    loser = next(i for i, r in enumerate(results) if r.cause == "journal")
    assert models[loser].calls == []
    log = await store.read("t")
    assert [e["index"] for e in log] == list(range(len(log)))
