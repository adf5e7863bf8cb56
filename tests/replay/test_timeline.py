"""Timeline: random access by checkpoints, sequential scrubbing, lazy verification, branches."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from agent_explorer.errors import AgentError, AgentLogFormatError, AgentMachineVersionMismatchError
from agent_explorer.eventlog.entries import create_replay_entry
from agent_explorer.eventlog.replay import replay
from agent_explorer.eventlog.timeline import Timeline, default_checkpoint_interval

from .machines import APPROVE, agent_machine, ask, conversation, drafted, live_states, record


class CountingMachine:
    """Wraps a real machine to count restores and let the engine count transitions."""

    def __init__(self, machine: Any) -> None:
        self._machine = machine
        self.restores = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._machine, name)

    def restore_snapshot(self, persisted: Any) -> Any:
        self.restores += 1
        return self._machine.restore_snapshot(persisted)


@pytest.fixture
def long_log(machine: Any) -> list[dict[str, Any]]:
    return record(machine, conversation(30), input={"question": "hi"})


def test_default_interval_is_sqrt_n_clamped() -> None:
    assert default_checkpoint_interval(1) == 16
    assert default_checkpoint_interval(10_000) == 100
    assert default_checkpoint_interval(1_000_000) == 256


def test_state_at_every_index_equals_the_replayed_prefix(machine: Any, long_log: list[dict[str, Any]]) -> None:
    timeline = Timeline(machine, long_log, checkpoint_every=7)
    assert len(timeline) == len(long_log)
    live = live_states(machine, long_log)
    order = list(range(len(long_log)))
    random.Random(4).shuffle(order)
    for index in order:
        expected = machine.get_persisted_snapshot(live[index])
        assert timeline.persisted_at(index) == expected, index
        assert machine.get_persisted_snapshot(timeline.state_at(index)) == expected
        assert timeline.hash_at(index) == long_log[index]["verification"]["stateHash"]
    assert timeline.persisted_at(-1) == replay(machine, long_log).persisted_snapshot


def test_a_jump_is_one_restore_and_at_most_k_transitions(machine: Any, long_log: list[dict[str, Any]]) -> None:
    counting = CountingMachine(machine)
    timeline = Timeline(counting, long_log, checkpoint_every=10, cache_size=1)
    assert timeline.checkpoint_count == (len(long_log) - 1) // 10 + 1
    for index in (57, 3, 149, 120, 88):
        before = counting.restores
        timeline.state_at(index)
        assert counting.restores - before == 1  # from the checkpoint at index - index % 10


def test_sequential_scrubbing_does_not_restore(machine: Any, long_log: list[dict[str, Any]]) -> None:
    counting = CountingMachine(machine)
    timeline = Timeline(counting, long_log, checkpoint_every=10)
    timeline.state_at(41)
    restores = counting.restores
    for index in range(42, 80):  # forward, one step each
        timeline.state_at(index)
    for index in range(79, 40, -1):  # and back over states the LRU kept
        timeline.state_at(index)
    assert counting.restores == restores


def test_lazy_timeline_builds_checkpoints_progressively(machine: Any, long_log: list[dict[str, Any]]) -> None:
    timeline = Timeline(machine, long_log, checkpoint_every=10, lazy=True)
    assert timeline.built == 1 and timeline.checkpoint_count == 1
    timeline.state_at(35)
    assert timeline.built == 36 and timeline.checkpoint_count == 4
    assert timeline.persisted_at(12) == replay(machine, long_log[:13]).persisted_snapshot
    assert timeline.build() == len(long_log) - 1
    assert timeline.persisted_at(-1) == replay(machine, long_log).persisted_snapshot


def test_verify_at_is_lazy_and_reports_the_divergence(machine: Any, long_log: list[dict[str, Any]]) -> None:
    tampered = copy.deepcopy(long_log)
    tampered[40]["verification"]["stateHash"] = "a" * 64
    del tampered[41]["verification"]
    timeline = Timeline(machine, tampered)  # building it does not verify
    assert timeline.verify_at(39) is None
    divergence = timeline.verify_at(40)
    assert divergence is not None
    assert (divergence.index, divergence.kind, divergence.expected_hash) == (40, "state", "a" * 64)
    assert divergence.actual_hash == long_log[40]["verification"]["stateHash"]
    assert timeline.verify_at(41) is None
    missing = timeline.verify_at(41, strict=True)
    assert missing is not None and missing.kind == "missing-verification"


def test_trace_at_names_the_transition_taken(machine: Any, long_log: list[dict[str, Any]]) -> None:
    timeline = Timeline(machine, long_log)
    # Entry 4 is the first APPROVE: deciding -> acting by the guarded (first) transition.
    trace = timeline.trace_at(4)
    approve = machine.definition["states"]["deciding"]["on"]["APPROVE"]
    taken = [t for step in trace for t in step["transitions"]]
    assert taken == [approve[0]["id"]]
    assert any("deciding" in state for step in trace for state in step["exited"])
    assert any("acting" in state for step in trace for state in step["entered"])
    assert timeline.trace_at(2) == []  # a usage entry transitions nothing
    initial = timeline.trace_at(0)  # entering the initial configuration
    root, idle = machine.definition["id"], machine.definition["states"]["idle"]["id"]
    assert [s for step in initial for s in step["entered"]] == [root, idle]


def test_append_grows_a_branch(machine: Any) -> None:
    log = record(machine, [ask("q"), drafted("d")])
    timeline = Timeline(machine, log, checkpoint_every=2)
    entry = create_replay_entry(machine, APPROVE, len(log))
    after = timeline.append(entry)
    assert after.value == "acting"
    assert len(timeline) == 4 and timeline.state_at(3) is after
    assert timeline.persisted_at(3) == replay(machine, [*log, entry]).persisted_snapshot
    with pytest.raises(AgentLogFormatError):
        timeline.append(create_replay_entry(machine, APPROVE, 9))
    with pytest.raises(AgentMachineVersionMismatchError):
        timeline.append({**create_replay_entry(machine, APPROVE, 4), "machineVersion": "x"})
    assert len(timeline) == 4


def test_construction_checks_init_and_versions(machine: Any, long_log: list[dict[str, Any]]) -> None:
    with pytest.raises(AgentLogFormatError):
        Timeline(machine, long_log[1:])
    with pytest.raises(AgentMachineVersionMismatchError) as caught:
        Timeline(agent_machine(version="9"), long_log)
    assert caught.value.index == 0
    opened = Timeline(agent_machine(version="9"), long_log, check_version=False)
    assert opened.persisted_at(-1) == replay(machine, long_log).persisted_snapshot
    with pytest.raises(AgentError):
        Timeline(machine, long_log, checkpoint_every=0)


def test_indices_are_checked(machine: Any, long_log: list[dict[str, Any]]) -> None:
    timeline = Timeline(machine, long_log)
    with pytest.raises(IndexError):
        timeline.state_at(len(long_log))
    with pytest.raises(TypeError):
        timeline.state_at(1.5)  # type: ignore[arg-type]
    assert timeline.entry(-1) is timeline.entries[-1]


def test_fork_shares_checkpoints_and_grows_apart(machine: Any, long_log: list[dict[str, Any]]) -> None:
    counting = CountingMachine(machine)
    timeline = Timeline(counting, long_log, checkpoint_every=10)
    branch = timeline.fork(45)
    assert len(branch) == 45 and len(timeline) == len(long_log)
    assert branch.checkpoint_count == 5
    restores = counting.restores
    assert branch.persisted_at(44) == timeline.persisted_at(44)
    assert counting.restores == restores  # the state at the cut was handed over
    entry = create_replay_entry(machine, {"type": "CANCEL"}, 45)
    branch.append(entry)
    assert branch.persisted_at(45) == replay(machine, [*long_log[:45], entry]).persisted_snapshot
    assert timeline.entry(45) == long_log[45]
    with pytest.raises(AgentError):
        timeline.fork(0)


def test_effects_at_reads_the_ledger_folded_along(machine: Any) -> None:
    """A ledger given to the Timeline is stepped with every entry of its one fold (the usage entry
    included: it changes nothing), and effects_at reads the ledger of that index."""
    from agent_explorer.errors import AgentError

    seen: list[tuple[int, str | None, bool]] = []

    class Owed:
        def __init__(self, children: tuple[str, ...] = ()) -> None:
            self.children = children

        def step(self, step: Any) -> None:
            seen.append((step.index, step.event_type, step.actions is not None))
            self.children = tuple(sorted(step.snapshot.children))

        def copy(self) -> Owed:
            return Owed(self.children)

        def owed(self) -> list[Any]:
            return [{"type": f"owed-{child}"} for child in self.children]

    log = record(machine, [ask("q"), {"type": "@agent.usage", "requestId": "r", "model": "m",
                                      "usage": {"totalTokens": 1}}, drafted("d")])
    timeline = Timeline(machine, log, ledger=lambda m, init: Owed(tuple(sorted(init.snapshot.children))))
    # After the usage entry (2), the owed request is still the draft spawned by the ASK (1).
    assert timeline.effects_at(2) == [{"type": "owed-draft"}]
    assert timeline.effects_at(3) == []
    assert seen[:3] == [(1, "ASK", True), (2, "@agent.usage", False), (3, "xstate.done.actor.draft", True)]
    with pytest.raises(AgentError) as caught:
        Timeline(machine, log).effects_at(2)
    assert caught.value.code == "no-effect-ledger"


def test_a_background_build_lets_other_threads_read(machine: Any, long_log: list[dict[str, Any]]) -> None:
    import threading

    from agent_explorer.eventlog import timeline as timeline_module

    timeline = Timeline(machine, long_log, checkpoint_every=5, lazy=True)
    reports: list[tuple[int, int]] = []
    original = timeline_module.BUILD_CHUNK
    timeline_module.BUILD_CHUNK = 16
    try:
        worker = threading.Thread(target=timeline.build, kwargs={"progress": lambda b, t: reports.append((b, t))})
        worker.start()
        states = [machine.get_persisted_snapshot(timeline.state_at(i)) for i in range(0, len(long_log), 7)]
        worker.join()
    finally:
        timeline_module.BUILD_CHUNK = original
    assert timeline.built == len(long_log)
    assert reports[-1] == (len(long_log), len(long_log))
    assert [b for b, _ in reports] == sorted(b for b, _ in reports)
    assert states == [replay(machine, long_log[: i + 1]).persisted_snapshot for i in range(0, len(long_log), 7)]


def test_a_malformed_entry_is_named_at_construction(machine: Any, long_log: list[dict[str, Any]]) -> None:
    broken = copy.deepcopy(long_log)
    del broken[30]["event"]["type"]
    with pytest.raises(AgentLogFormatError) as caught:
        Timeline(machine, broken, lazy=True)
    assert caught.value.index == 30


def test_checkpoints_continue_exactly_like_the_fold_from_zero() -> None:
    """XState's plain restore orders a parallel state's deep history differently from the live run;
    a Timeline checkpoint must not: state_at(i) equals replay(entries[:i+1]) across the checkpoint."""
    from agent_explorer import create_machine, create_replay_entry, init_entry, replay, transition
    from agent_explorer.engine import initial_transition
    from agent_explorer.eventlog import Timeline

    machine = create_machine({"id": "m", "initial": "w", "states": {
        "w": {"initial": "p", "on": {"OFF": "#m.off"}, "states": {
            "p": {"type": "parallel", "states": {
                "r1": {"initial": "a", "states": {"a": {"on": {"R1": "a2"}}, "a2": {}}},
                "r2": {"initial": "b", "states": {"b": {}}}}},
            "h": {"type": "history", "history": "deep"}}},
        "off": {"on": {"BACK": "#m.w.h"}}}})
    entries = [init_entry(machine)]
    snapshot, _ = initial_transition(machine)
    for index, event in enumerate([{"type": "R1"}, {"type": "NOISE"}, {"type": "OFF"}, {"type": "BACK"}], start=1):
        snapshot, _ = transition(machine, snapshot, event)
        entries.append(create_replay_entry(machine, event, index, snapshot_after=snapshot))
    timeline = Timeline(machine, entries, checkpoint_every=2)  # a checkpoint sits at index 2, before OFF
    for i in range(len(entries)):
        assert timeline.persisted_at(i) == replay(machine, entries[: i + 1]).persisted_snapshot, i
    fresh = Timeline(machine, entries, checkpoint_every=2)
    assert fresh.persisted_at(3) == replay(machine, entries[:4]).persisted_snapshot  # jump straight past it
