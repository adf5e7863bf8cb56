"""The event composer: the events a state accepts (checked with snapshot.can), templates for what is in flight
and armed, a dry run that validates with the event schemas, and sending that forks, appends and moves there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_explorer import read_log
from agent_explorer.explorer import Explorer
from agent_explorer.explorer.composer import choices_at, dry_run
from agent_explorer.samples import support_agent

LOGS = Path(__file__).parents[2] / "sample_logs"
TIMER = "xstate.after.approvalTimeout.support.awaitingApproval"


@pytest.fixture
def ex() -> Explorer:
    return Explorer(support_agent, list(read_log(LOGS / "support_clean.jsonl")))


def by_type(ex: Explorer, index: int) -> dict[str, Any]:
    line = ex.line
    return {c.type: c for c in choices_at(support_agent, line.timeline.state_at(index), line.pending(index))}


def test_waiting_for_approval_offers_the_reviewer_events_and_the_timer(ex: Explorer) -> None:
    choices = by_type(ex, 7)
    order = list(choices)
    assert order[:3] == [TIMER, "APPROVE", "REJECT"], "armed timers first, then what the state accepts"
    assert choices[TIMER].kind == "timer" and choices[TIMER].enabled and "armed at 6" in str(choices[TIMER].note)
    approve = choices["APPROVE"]
    assert approve.enabled and approve.template == {"type": "APPROVE", "approver": "", "note": ""}
    assert [(f.name, f.type, f.required, f.default) for f in approve.fields] == [
        ("approver", "string", True, None),
        ("note", "string", False, ""),
    ]
    # the machine's other events are listed, shown as ignored here
    for other in ("OFFER_REFUND", "SEND_REPLY", "ESCALATE"):
        assert not choices[other].enabled and "ignored" in str(choices[other].note)


def test_children_in_flight_get_done_and_error_templates(ex: Explorer) -> None:
    choices = by_type(ex, 1)  # lookupOrder done: classify (a text request) in flight
    done, error = choices["xstate.done.actor.classify"], choices["xstate.error.actor.classify"]
    assert done.kind == "done" and done.enabled and done.template["output"] == {"text": ""}
    assert error.kind == "error" and "classify#1" in str(error.note)
    assert not error.enabled and "would stop with status error" in str(error.note), "triaging has no onError"
    pending = ex.line.pending(1)
    stopped = dry_run(support_agent, ex.line.timeline.state_at(1), pending, error.template)
    assert stopped["ok"] and not stopped["ignored"] and "status becomes error" in stopped["message"]
    assert "xstate.done.actor.lookupOrder" not in choices and TIMER not in choices


def test_dry_run_validates_with_the_schema_and_says_where_it_leads(ex: Explorer) -> None:
    snapshot, pending = ex.line.timeline.state_at(7), ex.line.pending(7)
    refused = dry_run(support_agent, snapshot, pending, {"type": "APPROVE", "approver": ""})
    assert refused["ok"] is False and "approver" in refused["error"] and refused["fields"] == ["approver"]
    ok = dry_run(support_agent, snapshot, pending, {"type": "APPROVE", "approver": "kim"})
    assert ok == {
        "ok": True,
        "ignored": False,
        "event": {"type": "APPROVE", "approver": "kim", "note": ""},
        "message": "APPROVE: awaitingApproval → refunding",
    }
    ignored = dry_run(support_agent, snapshot, pending, {"type": "SEND_REPLY"})
    assert ignored["ok"] and ignored["ignored"] and "would be ignored in awaitingApproval" in ignored["message"]
    forged = dry_run(support_agent, snapshot, pending, {"type": "xstate.done.actor.classify", "output": {"text": "x"}})
    assert forged["ok"] is False and "not in flight" in forged["error"]


def test_sending_forks_appends_and_moves_there(ex: Explorer) -> None:
    ex.index = 7
    result = ex.compose({"type": "APPROVE", "approver": "kim"})
    branch = ex.line
    assert branch is not ex.branches().root and branch.forked_at == 8 and branch.parent is ex.branches().root
    assert result.index == 8 and not result.ignored and ex.index == 8 and ex.frame["valueText"] == "refunding"
    assert [c["id"] for c in ex.frame["inflight"]] == ["issueRefund"]
    # at the branch's last index the next event is appended to the same branch
    again = ex.compose({"type": "xstate.done.actor.issueRefund", "output": {"refundId": "RF-1"}})
    assert ex.line is branch and again.index == 9 and ex.frame["valueText"] == "replying"
    assert len(ex.branches()) == 1
    # a refused event leaves no fork behind
    ex.index = 3
    with pytest.raises(Exception, match="approver"):
        ex.compose({"type": "APPROVE"})
    assert len(ex.branches()) == 1


def test_the_widget_protocol(ex: Explorer) -> None:
    ex.index = 7
    assert ex.composer == {}, "nothing is derived until the composer is opened"
    ex._on_message(ex, {"kind": "composer", "open": True}, [])
    assert ex.composer["index"] == 7 and ex.composer["state"] == "awaitingApproval"
    assert ex.composer["appendsTo"] is None, "on the recording, sending forks first"
    assert [c["type"] for c in ex.composer["choices"]][:3] == [TIMER, "APPROVE", "REJECT"]
    ex.index = 1  # the open composer follows the cursor
    assert ex.composer["index"] == 1 and ex.composer["choices"][0]["type"] == "xstate.done.actor.classify"
    ex.index = 7
    ex._on_message(ex, {"kind": "compose-check", "event": {"type": "REJECT", "approver": "kim"}, "nonce": 4}, [])
    check = ex.composer["check"]
    assert check["ok"] is False and check["fields"] == ["reason"] and check["nonce"] == 4
    ex._on_message(ex, {"kind": "compose-send", "event": {"type": TIMER}, "nonce": 5}, [])
    assert ex.composer["sent"]["line"] == "fork-1" and ex.composer["sent"]["nonce"] == 5
    assert ex.line.name == "fork-1" and ex.frame["valueText"] == "escalated"
    assert ex.composer["index"] == 8 and ex.composer["appendsTo"] == "fork-1"
    ex._on_message(ex, {"kind": "compose-send", "event": {"type": "APPROVE"}, "nonce": 6}, [])
    assert ex.composer["check"]["ok"] is False and ex.composer["check"]["nonce"] == 6


def test_composing_on_the_branch_on_view_grows_it_without_a_line_switch(ex: Explorer) -> None:
    ex.index = 7
    ex.compose({"type": "APPROVE", "approver": "kim"})  # forks the recording: a line switch
    branch = ex.line
    ex.compare(ex.branches().root)
    hits = ex.search("APPROVE")
    assert len(hits) >= 1 and ex.search_results and ex.comparison
    search_results, comparison, verification = ex.search_results, ex.comparison, ex.verification
    table_offset = ex.table["offset"]
    again = ex.compose({"type": "xstate.done.actor.issueRefund", "output": {"refundId": "RF-1"}})
    # an append on the line on view is growth, not a switch: what the panels hold of the line survives
    assert ex.line is branch and ex.search_results == search_results and ex.comparison == comparison
    assert list(ex.search_hits) == list(hits) and ex.table["offset"] >= table_offset
    # ...and every view caught up with the new entry, the cursor on it as before
    assert ex.index == again.index == len(branch.entries) - 1 and ex.length == len(branch.entries)
    assert ex.frame["index"] == again.index and ex.frame["valueText"] == "replying"
    assert ex.table["query"]["text"] == "APPROVE", "the table keeps the search's filter"
    assert dict(map(tuple, ex.table_types)).get("xstate.done.actor.issueRefund") == 1
    assert verification["status"] == ex.verification["status"]
    assert ex._session.usage is not None and ex._session.usage.entries is branch.entries
    assert [n["length"] for n in ex.lineage["nodes"] if n["id"] == branch.name] == [len(branch.entries)]
