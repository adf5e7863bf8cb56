"""Each committed sample log shows what its README row promises, checked against the real machines.

Every log names its machine (`metadata.machineRef`) and verifies against it, except `support-divergent`, which
diverges from today's `support_agent` at the documented index and verifies against the machine that recorded it.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from agent_explorer import replay
from agent_explorer.eventlog import iter_log, read_log, state_hash, verify_log
from agent_explorer.eventlog.machine_ref import import_machine
from agent_explorer.runtime import run_agent
from agent_explorer.samples import (
    planner_agent,
    research_agent,
    support_agent,
    support_agent_old_policy,
    support_agent_v2,
)
from agent_explorer.samples.models import ModelRouter, scripted
from agent_explorer.samples.regenerate import DIVERGENCE_INDEX, SAMPLES, jsonl_name
from agent_explorer.samples.support import LARGE_MODEL, SMALL_MODEL
from agent_explorer.stores import create_in_memory_event_log_store

from .conftest import COMMITTED

SHORT = [s for s in SAMPLES if s.thread_id != "inbox-long"]


def _log(thread_id: str) -> list[dict[str, Any]]:
    return read_log(COMMITTED / jsonl_name(thread_id))


def _types(entries: list[dict[str, Any]]) -> list[str]:
    return [e["event"]["type"] for e in entries]


@pytest.mark.parametrize("sample", SHORT, ids=lambda s: s.thread_id)
def test_every_log_names_its_machine_and_verifies_unless_it_is_the_divergent_one(sample: Any) -> None:
    entries = _log(sample.thread_id)
    assert entries[0]["metadata"]["machineRef"] == sample.machine_ref
    report = verify_log(import_machine(entries[0]["metadata"]["machineRef"]), entries)
    if sample.diverges_at is None:
        assert report.ok, str(report)
        assert all("stateHash" in e["verification"] for e in entries)  # strict would pass too
    else:
        assert report.first_divergence == sample.diverges_at


def test_the_long_run_prefix_verifies_with_its_named_machine(sample_logs: Path) -> None:
    head = list(itertools.islice(iter_log(sample_logs / jsonl_name("inbox-long")), 5001))
    machine = import_machine(head[0]["metadata"]["machineRef"])
    assert verify_log(machine, head).ok


@pytest.mark.slow
def test_the_whole_long_run_verifies(sample_logs: Path) -> None:
    entries = read_log(sample_logs / jsonl_name("inbox-long"))
    assert len(entries) >= 100_000
    assert verify_log(import_machine(entries[0]["metadata"]["machineRef"]), entries).ok


def test_the_divergent_log_diverges_at_the_offer_refund_decision_and_verifies_with_its_recorder() -> None:
    entries = _log("support-divergent")
    report = verify_log(support_agent, entries)
    assert report.first_divergence == DIVERGENCE_INDEX
    first = report.first
    assert first is not None and first.kind == "state"
    assert entries[DIVERGENCE_INDEX]["event"]["type"] == "OFFER_REFUND"
    assert report.divergent_indices[0] == DIVERGENCE_INDEX
    # The machine that recorded it (same id, same version "1") folds it cleanly: only the guard's body changed.
    assert support_agent_old_policy.version == support_agent.version == entries[0]["machineVersion"]
    assert verify_log(support_agent_old_policy, entries).ok
    assert replay(support_agent, entries[: DIVERGENCE_INDEX + 1], verify=False).snapshot.value == "deciding"


async def test_the_crashed_run_owes_the_in_flight_request_and_a_resume_executes_only_that() -> None:
    entries = _log("support-crashed")
    assert _types(entries)[-1] == "@agent.usage"
    owed = replay(support_agent, entries).effects
    assert [(e.kind, e.request_id) for e in owed] == [("text", "draft#1")]

    store = create_in_memory_event_log_store()
    await store.append(thread_id="t", expected_index=0, entries=entries)
    large = scripted(LARGE_MODEL, ["Hi Ravi, sorry for the late stove kit."], ["SEND_REPLY"])
    router = ModelRouter({SMALL_MODEL: scripted(SMALL_MODEL), LARGE_MODEL: large})
    result = await run_agent(support_agent, store=store, thread_id="t", executors=router)
    # Recorded calls (lookup, classify) are not re-run; the owed draft is (at-least-once), then the run goes on.
    assert [c.request_id for c in router.calls][:1] == ["draft#1"]
    assert "classify#1" not in [c.request_id for c in router.calls]
    assert result.events[: len(entries)] == entries


def test_ignored_events_are_journaled_and_leave_the_state_as_it_was() -> None:
    entries = _log("support-ignored")
    ignored = [i for i, t in enumerate(_types(entries)) if t == "CUSTOMER_REPLIED"]
    assert len(ignored) == 2
    for index in ignored:
        before = entries[index - 1]["verification"]["stateHash"]
        assert entries[index]["verification"]["stateHash"] == before
    # Nobody approved: the journaled timer firing escalated the ticket, four hours after the agent began waiting.
    assert _types(entries)[-1] == "xstate.after.approvalTimeout.support.awaitingApproval"
    final = replay(support_agent, entries).snapshot
    assert final.value == "escalated" and final.output == {"resolution": "escalated", "reason": "no approval within 4 hours"}


def test_the_research_branches_complete_out_of_spawn_order_and_replay_keeps_that_order() -> None:
    entries = _log("research-race")
    completions = [t.rsplit(".", 1)[-1] for t in _types(entries) if t.startswith("xstate.done.actor.branch")]
    assert completions == ["branch2", "branch0", "branch1"]
    snapshot = replay(research_agent, entries).snapshot
    assert snapshot.context["arrivals"] == completions
    assert snapshot.status == "done"


def test_the_plan_applies_moves_one_by_one_and_completes_with_steps_and_stopped() -> None:
    entries = _log("planner-trip")
    done = next(e for e in entries if e["event"]["type"] == "xstate.done.actor.plan")
    assert done["event"]["output"]["stopped"] == "done"
    assert [s["type"] for s in done["event"]["output"]["steps"]] == ["BOOK_FLIGHT", "BOOK_HOTEL", "ADD_ACTIVITY", "ADD_ACTIVITY"]
    # The over-budget dinner was refused by the guard and retried: billed (two usage records), never applied.
    assert "fado" not in str([e["event"] for e in entries if e["event"]["type"] == "ADD_ACTIVITY"])
    usage_between = _types(entries)[_types(entries).index("BOOK_HOTEL") + 1 : _types(entries).index("ADD_ACTIVITY")]
    assert usage_between == ["@agent.usage"]
    final = replay(planner_agent, entries).snapshot
    assert final.context["spentCents"] <= final.context["budgetCents"]


def test_the_bridge_pair_is_a_v1_log_and_a_v2_segment_starting_from_the_migrated_snapshot() -> None:
    old, new = _log("support-bridge-v1"), _log("support-bridge-v2")
    assert {e["machineVersion"] for e in old} == {"1"} and {e["machineVersion"] for e in new} == {"2"}
    assert new[0]["metadata"]["migratedFrom"] == {
        "machineId": "support", "version": "1", "logIndex": len(old), "logId": "support-bridge-v1",
    }
    old_end = support_agent.get_persisted_snapshot(replay(support_agent, old).snapshot)
    assert new[0]["event"]["snapshot"] == support_agent_v2.migrate(old_end, "1")
    assert "approval" not in new[0]["event"]["snapshot"]["context"]
    assert state_hash(old_end) == old[-1]["verification"]["stateHash"]
    final = replay(support_agent_v2, new).snapshot
    assert final.value == "resolved" and [a["decision"] for a in final.context["approvals"]] == ["approved"]


def test_the_whatif_branch_is_the_clean_run_up_to_the_approval_then_a_rejection() -> None:
    clean, branch = _log("support-clean"), _log("support-whatif")
    at = _types(clean).index("APPROVE")
    assert branch[:at] == clean[:at]
    assert branch[at]["event"]["type"] == "REJECT"
    assert replay(support_agent, clean).snapshot.output["refund"] is not None
    assert replay(support_agent, branch).snapshot.output["refund"] is None
