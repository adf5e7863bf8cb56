"""Branches as values: a lineage tree of forks (and forks of forks), diffs between any two lines, pure forks,
and the validated path for what-if completions and timer firings."""

from __future__ import annotations

import asyncio
import importlib
from pathlib import Path
from typing import Any

import pytest
from sample_run import long_events, record

from agent_explorer import (
    ScriptedModel,
    create_in_memory_event_log_store,
    read_log,
    run_agent,
    verify_log,
)
from agent_explorer.engine import algorithm
from agent_explorer.errors import AgentError, AgentInvalidEventPayloadError
from agent_explorer.eventlog.verification import Verifier
from agent_explorer.explorer import Explorer
from agent_explorer.runtime import parse_agent_event
from agent_explorer.samples import support_agent

LOGS = Path(__file__).parents[2] / "sample_logs"


@pytest.fixture
def support_log() -> list[dict[str, Any]]:
    return list(read_log(LOGS / "support_clean.jsonl"))


def test_forks_of_forks_form_a_lineage(machine: Any, entries: list[dict[str, Any]]) -> None:
    ex = Explorer(machine, entries)
    first = ex.fork(at=5)
    first.append({"type": "CANCEL"})  # 5: back to idle
    second = first.fork(at=6)  # a fork of the fork, keeping the CANCEL
    second.append({"type": "START"})
    # a fork made on a branch object belongs to the explorer's tree as well
    lineage = ex.branches()
    assert lineage == [first, second] and lineage.root is ex.line and lineage.root.parent is None
    assert (first.parent, first.forked_at, second.parent, second.forked_at) == (lineage.root, 5, first, 6)
    assert [b.name for b in lineage.lines()] == ["recording", "fork-1", "fork-2"]
    assert second.lineage() == [lineage.root, first, second]
    table = lineage.to_pandas()
    assert table.to_dict("records")[1:] == [
        {"name": "fork-1", "parent": "recording", "forked_at": 5, "length": 6, "appended": 1, "thread_id": None,
         "parent_thread_id": None},
        {"name": "fork-2", "parent": "fork-1", "forked_at": 6, "length": 7, "appended": 1, "thread_id": None,
         "parent_thread_id": None},
    ]
    # drawn beside the slider: one node per line with its parent and cut, the line on view marked
    assert ex.lineage["current"] == "recording"
    assert [(n["id"], n["parent"], n["forkedAt"]) for n in ex.lineage["nodes"]] == [
        ("recording", None, None), ("fork-1", "recording", 5), ("fork-2", "fork-1", 6)
    ]
    # one naming scheme everywhere: the header names the line on view the same way
    ex.checkout(second)
    assert ex.info["line"] == "fork-2" and ex.lineage["current"] == "fork-2"
    named = ex.fork(at=3, name="rejected")
    assert named.name == "rejected" and "rejected" in [n["id"] for n in ex.lineage["nodes"]]
    with pytest.raises(AgentError):
        ex.fork(at=3, name="rejected")  # names are unique in a lineage
    ex.checkout()
    assert "fork-2: 7 entries forked at 6 from fork-1" in repr(lineage)
    assert len(ex) == 9 and verify_log(machine, second.entries).ok, "the recording is untouched"


def test_any_two_lines_diff(machine: Any, entries: list[dict[str, Any]]) -> None:
    ex = Explorer(machine, entries)
    a, b = ex.fork(at=5), ex.fork(at=5)
    a.append({"type": "CANCEL"})
    b.append({"type": "TICK"})
    d = a.diff(b)
    assert d.index == 5 and d.forked_at == 5
    assert (d.event_a, d.event_b) == ({"type": "CANCEL"}, {"type": "TICK"})
    paths = {tuple(c["path"]) for c in d.diff}
    assert ("value",) in paths and ("context", "n") in paths
    # against the recording: the first state that differs, with the recorded event there
    d = ex.branches().root.diff(a)
    assert d.index == 5 and d.event_a == entries[5]["event"] and d.event_b == {"type": "CANCEL"}
    # a fork that appends nothing differs only by ending early
    c = ex.fork(at=7)
    assert ex.line.diff(c).reason == "one run ends at index 6" and ex.line.diff(c).event_b is None
    shown = ex.compare(a)
    assert ex.comparison["eventB"] == {"type": "CANCEL"} and shown.index == 5


def test_a_fork_refolds_nothing(machine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    log = record(machine, long_events(4000))
    ex = Explorer(machine, log)
    calls: list[int] = []
    real = algorithm.macrostep
    counting = lambda *a, **k: calls.append(1) or real(*a, **k)  # noqa: E731 - every engine transition
    monkeypatch.setattr(algorithm, "macrostep", counting)
    monkeypatch.setattr(importlib.import_module("agent_explorer.engine.transition"), "macrostep", counting)
    branch = ex.fork(at=3500)
    timeline = ex.line.timeline
    every = timeline.checkpoint_every
    assert len(calls) <= every, f"forking at 3,500 folded {len(calls)} entries"
    assert branch.timeline.persisted_at(3499) == timeline.persisted_at(3499)
    grand = branch.fork(at=3000)
    assert grand.timeline.persisted_at(2999) == timeline.persisted_at(2999)


async def test_forks_reuse_recorded_completions_and_execute_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run recorded by run_agent with a scripted model: forking and growing it calls neither model nor tool."""
    store = create_in_memory_event_log_store()
    model = ScriptedModel(["Product", "Sorry; a refund is on its way.", "Refund issued."], decisions=["OFFER_REFUND"])
    ticket = {"ticket": {"id": "T-1", "customer": "Ann", "subject": "Torn", "body": "Order A-5531", "orderId": "A-5531"}}
    result = await run_agent(support_agent, input=ticket, store=store, thread_id="t", executors=model)
    await result.drain()
    assert result.snapshot.value == "awaitingApproval"
    calls = len(model.calls)
    tool_calls: list[Any] = []
    from agent_explorer.samples import support as support_module

    class CountingOrders(dict[str, Any]):
        def get(self, key: str, default: Any = None) -> Any:
            tool_calls.append(key)
            return super().get(key, default)

    monkeypatch.setattr(support_module, "ORDERS", CountingOrders(support_module.ORDERS))

    def explore() -> None:
        ex = Explorer.from_store(store, "t", support_agent)
        branch = ex.fork(at=3)  # classify done, draft in flight
        done = branch.append({"type": "xstate.done.actor.draft", "output": {"text": "What-if draft"}})
        assert done.value == "deciding" and done.entry["causationId"] == "draft#1"
        fork_of_fork = branch.fork()
        fork_of_fork.append({"type": "OFFER_REFUND"})
        assert fork_of_fork.snapshot.value == "awaitingApproval"
        assert branch.parent_thread_id == "t" and fork_of_fork.parent is branch
        assert branch.save(thread_id="t-what-if") == "t-what-if"

    await asyncio.to_thread(explore)
    assert len(model.calls) == calls and tool_calls == [], "nothing was re-executed"
    await support_module.lookup_order({"orderId": "A-5531"})
    assert tool_calls == ["A-5531"], "the counter sees a real tool call"
    assert len(await store.read("t-what-if")) == 4


def test_completions_of_children_in_flight(support_log: list[dict[str, Any]]) -> None:
    ex = Explorer(support_agent, support_log)
    branch = ex.fork(at=2)  # lookupOrder done; classify (a text request) in flight
    with pytest.raises(AgentInvalidEventPayloadError) as caught:
        branch.append({"type": "xstate.done.actor.draft", "output": {"text": "x"}})
    assert "'draft', which is not in flight after index 1 (in flight: classify)" in caught.value.message
    with pytest.raises(AgentInvalidEventPayloadError) as caught:
        branch.append({"type": "xstate.done.actor.classify", "output": "Billing"})
    assert "must be an object with a string 'text'" in caught.value.message
    failed = branch.fork().append({"type": "xstate.error.actor.classify", "error": "model overloaded"})
    assert not failed.ignored and "(status error)" in failed.message, "no onError: the machine stops"
    assert failed.entry["event"] == {
        "type": "xstate.error.actor.classify",
        "error": {"name": "Error", "message": "model overloaded"},
    }
    done = branch.append({"type": "xstate.done.actor.classify", "output": {"text": "Billing"}})
    assert done.value == "drafting" and done.entry["causationId"] == "classify#1"
    assert len(branch) == 3 and verify_log(support_agent, branch.entries).ok


def test_firing_a_pending_timer(support_log: list[dict[str, Any]]) -> None:
    ex = Explorer(support_agent, support_log)
    timer = "xstate.after.approvalTimeout.support.awaitingApproval"
    with pytest.raises(AgentInvalidEventPayloadError) as caught:
        ex.fork(at=3).append({"type": timer})
    assert "is not pending after index 2 (no timer is armed)" in caught.value.message
    branch = ex.fork(at=8)  # waiting for approval, the 4-hour timer armed at 6
    fired = branch.append({"type": timer, "ignored": "extra keys are dropped"})
    assert fired.value == "escalated" and fired.entry["event"] == {"type": timer}
    assert branch.pending().timers == []


@pytest.mark.parametrize(
    "event",
    [{"type": "xstate.init"}, {"type": "xstate.done.state.support"}, {"type": "xstate.stop"}],
    ids=["init", "done-state", "stop"],
)
def test_other_engine_events_are_refused(support_log: list[dict[str, Any]], event: dict[str, Any]) -> None:
    branch = Explorer(support_agent, support_log).fork(at=2)
    with pytest.raises(AgentInvalidEventPayloadError) as caught:
        branch.append(event)
    assert "engine event a branch cannot append" in caught.value.message and len(branch) == 2


def test_the_wire_boundary_still_refuses_engine_events() -> None:
    """The relaxed path is for branches only: parse_agent_event (a route handler's) keeps refusing them."""
    with pytest.raises(AgentInvalidEventPayloadError):
        parse_agent_event(support_agent, {"type": "xstate.done.actor.classify", "output": {"text": "forged"}})


def test_the_recording_is_never_appended_to(machine: Any, entries: list[dict[str, Any]]) -> None:
    ex = Explorer(machine, entries)
    with pytest.raises(AgentError) as caught:
        ex.branches().root.append({"type": "START"})
    assert caught.value.code == "invalid-argument" and "fork it first" in caught.value.message and len(ex) == 9


def test_checkout_views_a_branch_and_back(machine: Any, entries: list[dict[str, Any]]) -> None:
    ex = Explorer(machine, entries)
    branch = ex.fork(at=5)
    branch.append({"type": "CANCEL"})
    ex.checkout(branch)
    assert ex.line is branch and len(ex) == 6 and ex.length == 6 and ex.index == 5
    assert ex.frame["valueText"] == "idle" and ex.frame["entry"]["type"] == "CANCEL"
    assert ex.verification["status"] == "ok" and ex.lineage["current"] == "fork-1"
    assert ex.table["total"] == 6
    ex._on_message(ex, {"kind": "checkout", "branch": "recording"}, [])
    assert ex.line is ex.branches().root and len(ex) == 9 and ex.index == 8
    with pytest.raises(AgentError):
        ex.checkout(Explorer(machine, entries).fork(at=2))


def _store(kind: str, tmp_path: Path) -> Any:
    import os

    if kind == "memory":
        return create_in_memory_event_log_store()
    if kind == "sqlite":
        from agent_explorer.stores import SqliteEventLogStore

        return SqliteEventLogStore(str(tmp_path / "runs.db"))
    dsn = os.environ.get("AGENT_EXPLORER_TEST_PG_DSN")
    if not dsn:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("CI=true but AGENT_EXPLORER_TEST_PG_DSN is not set")
        pytest.skip("no PostgreSQL: set AGENT_EXPLORER_TEST_PG_DSN (scripts/pg_cluster.sh start DIR prints one)")
    from agent_explorer.stores import PostgresEventLogStore

    return PostgresEventLogStore(dsn)


@pytest.mark.parametrize("kind", ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_threads_forked_in_the_store_take_their_place_in_the_lineage(kind: str, tmp_path: Path) -> None:
    """store.fork keeps no parentage; the verbatim shared prefix places a thread under the right line."""
    import uuid

    clean = list(read_log(LOGS / "support_clean.jsonl"))
    whatif = list(read_log(LOGS / "support_whatif.jsonl"))  # support-clean forked at 8, then a REJECT
    store = _store(kind, tmp_path)
    t = f"t{uuid.uuid4().hex[:6]}-"  # a shared PostgreSQL database outlives the test

    async def fill() -> None:
        await store.append(thread_id=t + "clean", expected_index=0, entries=clean)
        await store.fork(thread_id=t + "clean", new_thread_id=t + "whatif", up_to_index=8)
        await store.append(thread_id=t + "whatif", expected_index=8, entries=whatif[8:])
        await store.fork(thread_id=t + "whatif", new_thread_id=t + "whatif-short", up_to_index=12)
        other = list(read_log(LOGS / "support_ignored.jsonl"))
        await store.append(thread_id=t + "other", expected_index=0, entries=other)

    try:
        asyncio.run(fill())
        ex = Explorer.from_store(store, t + "clean", support_agent)
        found = [b for b in ex.find_forks(limit=100_000) if b.name.startswith(t)]
        assert [(b.name, b.parent.name if b.parent else None, b.forked_at, len(b)) for b in found] == [
            (t + "whatif", "recording", 8, 16),
            (t + "whatif-short", t + "whatif", 12, 12),
        ], "the unrelated thread is left out; the fork of the fork hangs under its parent"
        whatif_line = found[0]
        d = ex.line.diff(whatif_line)
        assert d.index == 8 and d.event_b is not None and d.event_b["type"] == "REJECT"
        assert whatif_line.timeline.persisted_at(15) == Explorer(support_agent, whatif).line.timeline.persisted_at(15)
        assert ex.add_thread(t + "whatif") is whatif_line, "adopting twice gives the same line"
        with pytest.raises(AgentError) as caught:
            ex.add_thread(t + "other")
        assert caught.value.code == "invalid-fork" and "not a fork of this run" in caught.value.message
        # a fork of an adopted line grows in memory; saved, it is a thread that takes its place again
        threads = asyncio.run(store.list_threads(limit=1000))
        grand = whatif_line.fork(at=9)
        grand.append({"type": "xstate.done.actor.draft", "output": {"text": "Shorter draft"}})
        assert grand.parent is whatif_line and asyncio.run(store.list_threads(limit=1000)) == threads
        assert grand.save(thread_id=t + "whatif-9") == t + "whatif-9"
        assert asyncio.run(store.length(t + "whatif-9")) == 10
        again = Explorer.from_store(store, t + "clean", support_agent)
        adopted = [b for b in again.find_forks(limit=100_000) if b.name == t + "whatif-9"]
        assert [(b.parent.name if b.parent else None, b.forked_at) for b in adopted] == [(t + "whatif", 9)]
    finally:
        close = getattr(store, "aclose", None)
        if close is not None:
            asyncio.run(close())


def test_a_decision_in_flight_is_answered_by_the_event_it_chooses(support_log: list[dict[str, Any]]) -> None:
    """As the runtime journals a decision: the chosen machine event, caused by the decision's request."""
    ex = Explorer(support_agent, support_log)
    branch = ex.fork(at=5)  # the draft is done; chooseAction (a decision) is in flight
    [decision] = [e for e in branch.pending().owed if e.kind == "decision"]
    assert decision.request is not None and "ESCALATE" in decision.request.events
    chosen = branch.append({"type": "ESCALATE"})
    assert chosen.entry["causationId"] == "chooseAction#1" == support_log[6]["causationId"]
    assert branch.pending().inflight == [] and chosen.value == "escalated"
    host = ex.fork(at=8).append({"type": "APPROVE", "approver": "kim"})
    assert "causationId" not in host.entry or host.entry["causationId"] is None


def test_coming_back_to_the_recording_keeps_its_report(
    machine: Any, entries: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long recording is verified once; viewing a branch and coming back must not verify it again."""
    from sample_run import tamper

    ex = Explorer(machine, tamper(entries, 4, type="NOTE", text="edited"))
    assert ex.verification["status"] == "diverged" and ex.verification["first"] == 4
    branch = ex.fork(at=3)
    ex.checkout(branch)
    assert ex.verification["status"] == "ok"
    monkeypatch.setattr(Verifier, "check", lambda *a: pytest.fail("the recording was verified again"))
    ex.checkout()
    assert ex.verification["status"] == "diverged" and ex.verification["first"] == 4
