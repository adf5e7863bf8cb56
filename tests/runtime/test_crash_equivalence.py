"""Crash equivalence (issue 6 "Tests"): cut the journal of a full run at every index, resume each
cut, and get the uninterrupted run's final state and output without re-running a recorded call."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_explorer.eventlog.replay import replay
from agent_explorer.runtime import run_agent
from agent_explorer.runtime.effects import completion_site

from .machines import FULL_INPUT, TASK_CALLS, full_machine, full_model

RUN = {"timers": "run", "time_scale": 0.001}


def _completed_requests(entries: list[dict[str, Any]]) -> set[str]:
    """Request ids whose outcome the journal records: completions and decisions' chosen events."""
    done: set[str] = set()
    for entry in entries:
        event_type = entry["event"]["type"]
        cause = entry.get("causationId")
        if cause and (completion_site(event_type) is not None or event_type in ("ACCEPT", "REVISE")):
            done.add(cause)
    return done


@pytest.fixture(scope="module")
def uninterrupted() -> tuple[Any, Any]:
    """One uninterrupted run, shared by every cut (its own event loop: module scope)."""
    model = full_model()
    result = asyncio.run(run_agent(full_machine, input=FULL_INPUT, executors=model, **RUN))
    assert result.status == "done", (result.cause, result.error)
    return result, model


async def test_the_uninterrupted_run_exercises_every_kind(uninterrupted: tuple[Any, Any]) -> None:
    result, model = uninterrupted
    types = [e["event"]["type"] for e in result.events]
    assert "xstate.done.actor.lookup" in types                   # task
    assert "xstate.done.actor.draft" in types                    # text
    assert "ACCEPT" in types                                     # decision (REVISE refused first)
    assert "xstate.after.1000.full.waiting" in types             # delay
    branch_order = [t.rsplit(".", 1)[-1] for t in types if t.startswith("xstate.done.actor.b")]
    assert branch_order == ["b1", "b2", "b0"]                    # a raced fan-out, journaled as it arrived
    assert sorted(c.request_id for c in model.calls) == ["b0#1", "b1#1", "b2#1", "draft#1", "judge#1", "judge#1"]
    replay(full_machine, result.events, verify="strict")


@pytest.mark.parametrize("cut", range(15))
async def test_resume_from_every_cut_reaches_the_same_end(uninterrupted: tuple[Any, Any], store: Any, cut: int) -> None:
    result, _ = uninterrupted
    assert len(result.events) == 14  # the parameter range covers every cut, 0..len
    prefix = result.events[:cut]
    if prefix:
        await store.append(thread_id="t", expected_index=0, entries=prefix)
    model = full_model()
    TASK_CALLS.clear()
    resumed = await run_agent(full_machine, input=FULL_INPUT, store=store, thread_id="t", executors=model, **RUN)

    assert resumed.status == "done", (resumed.cause, resumed.error)
    assert resumed.output == result.output
    assert full_machine.get_persisted_snapshot(resumed.snapshot) == full_machine.get_persisted_snapshot(result.snapshot)
    # No recorded model or task call ran again; every unrecorded one ran (at least once).
    recorded = _completed_requests(prefix)
    executed = {c.request_id for c in model.calls}
    assert not executed & recorded, f"re-executed recorded calls: {executed & recorded}"
    assert executed | recorded >= {"draft#1", "judge#1", "b0#1", "b1#1", "b2#1"}
    assert (len(TASK_CALLS) == 1) == ("lookup#1" not in recorded)
    # The resumed log extends the cut, stays contiguous and replays to the same end.
    assert resumed.events[:cut] == prefix
    assert [e["index"] for e in resumed.events] == list(range(len(resumed.events)))
    assert await store.read("t") == resumed.events
    assert replay(full_machine, resumed.events, verify="strict").snapshot.output == result.output
