"""Coverage: states entered and transitions taken, over one log, several logs and a store's threads."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from sample_run import long_events, record

from agent_explorer import Timeline
from agent_explorer.engine import transition_with_trace
from agent_explorer.errors import AgentError
from agent_explorer.explorer import Explorer
from agent_explorer.explorer.coverage import coverage_of, coverage_of_store
from agent_explorer.explorer.graph import iter_transitions
from agent_explorer.stores import create_in_memory_event_log_store


def test_one_log_counts_each_transition_taken_and_lists_the_ones_never_taken(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    cov = coverage_of(machine, entries)
    # NOTE at 1 is handled in idle; the NOTE at 7 arrives in `working`, which ignores it: counted once.
    assert cov.transitions["#agent.idle:on:NOTE:0"] == 1
    assert cov.transitions["#agent.idle:on:START:0"] == 1
    assert cov.transitions["#agent.working.monitor.ok:on:TICK:0"] == 1
    assert sorted(cov.never_taken()) == [
        "#agent.working.draft.review:on:REVISE:0",
        "#agent.working.draft.writing:after:500:0",
        "#agent.working:on:CANCEL:0",
    ]
    assert cov.never_entered() == ["agent.working.draft.hist"]
    assert cov.states["agent.idle"] == 1 and cov.states["agent.done"] == 1
    # Nested initial arrows count when their state is entered: START enters draft -> writing, monitor -> ok.
    assert (
        cov.transitions["#agent.working.draft:initial"] == 1
        and cov.transitions["#initial"] == 1
    )


def test_dataframe_lists_every_state_and_transition_of_the_chart_with_zero_rows(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    frame = coverage_of(machine, entries).to_pandas()
    transitions = frame[frame["kind"] == "transition"]
    defined = {str(t["id"]) for t in iter_transitions(machine.definition)}
    assert defined <= set(transitions["id"])
    assert set(frame.loc[frame["count"] == 0, "id"]) == {
        "agent.working.draft.hist",
        "#agent.working:on:CANCEL:0",
        "#agent.working.draft.writing:after:500:0",
        "#agent.working.draft.review:on:REVISE:0",
    }
    assert frame["share"].between(0, 1).all() and frame.attrs == {
        "runs": 1,
        "entries": 9,
    }


def test_counts_equal_an_independent_fold_of_the_timeline_traces(machine: Any) -> None:
    log = record(machine, long_events(1_500))
    cov = coverage_of(machine, log)
    timeline = Timeline(machine, log)
    expected: Counter[str] = Counter()
    for i in range(len(log)):
        for step in timeline.trace_at(i):
            expected.update(step["transitions"])
    # Timeline traces have no nested-initial keys; everything else must agree exactly.
    got = {k: v for k, v in cov.transitions.items() if not k.endswith(":initial")}
    assert got == dict(expected)
    assert sum(cov.transitions.values()) > 1_000


def test_a_list_of_logs_is_the_sum_of_its_logs(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    other = record(machine, long_events(40))
    both = coverage_of(machine, [entries, other])
    a, b = coverage_of(machine, entries), coverage_of(machine, other)
    assert (
        both.transitions == a.transitions + b.transitions
        and both.states == a.states + b.states
    )
    assert (both.runs, both.entries) == (2, len(entries) + len(other))
    assert (
        "#agent.working:on:CANCEL:0" not in both.never_taken()
    )  # the long run cancels


async def test_every_thread_of_a_store_that_runs_this_machine(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    store = create_in_memory_event_log_store()
    await store.append(thread_id="a", expected_index=0, entries=entries)
    await store.append(
        thread_id="b", expected_index=0, entries=record(machine, long_events(24))
    )
    other = [{**e, "machineId": "someone-else"} for e in entries[:1]]
    await store.append(thread_id="c", expected_index=0, entries=other)
    cov = coverage_of_store(
        store, machine
    )  # works inside a running loop (a notebook's)
    assert cov.runs == 2 and cov.entries == len(entries) + 25


def test_sample_store_support_threads_show_the_error_paths_never_taken(sample_logs: Path) -> None:
    from agent_explorer import SqliteEventLogStore
    from agent_explorer.samples import support_agent

    cov = coverage_of_store(SqliteEventLogStore(str(sample_logs / "samples.db")), support_agent)
    assert (
        cov.runs == 7
    )  # the seven support-* threads; inbox, planner and research are other machines
    assert "#support.deciding:on:ESCALATE:0" in cov.never_taken()
    assert not cov.never_entered()


def test_explorer_coverage_includes_branches_and_publishes_heat_levels(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    ex = Explorer(machine, entries)
    frame = ex.coverage()
    assert frame.loc[frame["id"] == "#agent.working:on:CANCEL:0", "count"].item() == 0
    branch = ex.fork(at=4)
    branch.append({"type": "CANCEL"})
    frame = ex.coverage()
    assert frame.loc[frame["id"] == "#agent.working:on:CANCEL:0", "count"].item() == 1
    data = ex.coverage_data
    json.dumps(data)  # synced to the browser as plain JSON
    assert data["runs"] == 2 and "#agent.working:on:CANCEL:0" not in data["neverTaken"]
    assert data["transitionLevels"]["#agent.working.draft.review:on:REVISE:0"] == 0
    assert max(data["transitionLevels"].values()) == 4 and set(
        data["stateLevels"]
    ) >= set(data["states"])
    # The same message the heatmap toggle sends recomputes it.
    ex.coverage_data = {}
    ex._on_message(ex, {"kind": "coverage"}, [])
    assert ex.coverage_data["runs"] == 2


def test_empty_log_is_a_clear_error(machine: Any) -> None:
    with pytest.raises(AgentError) as caught:
        coverage_of(machine, [[]])
    assert caught.value.code == "empty-log"


def test_trace_of_an_eventless_chain_counts_each_always_step() -> None:
    from agent_explorer.engine import create_machine

    chain = create_machine(
        {
            "id": "c",
            "initial": "a",
            "states": {
                "a": {"on": {"GO": "b"}},
                "b": {"always": "c"},
                "c": {"always": {"target": "d"}},
                "d": {"on": {"BACK": "a"}},
            },
        }
    )
    from agent_explorer import create_replay_entry, init_entry
    from agent_explorer.engine import initial_transition, transition

    log = [init_entry(chain)]
    snapshot, _ = initial_transition(chain)
    for i, event in enumerate(
        [{"type": "GO"}, {"type": "BACK"}, {"type": "GO"}], start=1
    ):
        snapshot, _ = transition(chain, snapshot, event)
        log.append(create_replay_entry(chain, event, i, snapshot_after=snapshot))
    cov = coverage_of(chain, log)
    assert (
        cov.transitions["#c.b:always:0"] == 2 and cov.transitions["#c.c:always:0"] == 2
    )
    assert cov.states["c.d"] == 2 and cov.states["c.a"] == 2
    _, _, trace = transition_with_trace(chain, snapshot, {"type": "BACK"})
    assert trace[0]["transitions"] == ["#c.d:on:BACK:0"]


def test_coverage_counts_every_line_once_whichever_is_checked_out() -> None:
    """With a branch on view, the recording still counts and the viewed branch is not counted twice."""
    from pathlib import Path

    from agent_explorer import Explorer, read_log
    from agent_explorer.samples import support_agent

    entries = read_log(Path(__file__).resolve().parents[2] / "sample_logs" / "support_clean.jsonl")
    ex = Explorer(support_agent, entries)
    branch = ex.fork(at=len(entries) - 2)
    before = ex.coverage()
    ex.checkout(branch)
    after = ex.coverage()
    assert before.equals(after)
