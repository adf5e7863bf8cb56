"""replay: the pure fold, its seeding, version checks and hash verification."""

from __future__ import annotations

import copy
import importlib
from typing import Any

import pytest

from agent_explorer.canonical.jcs import state_hash
from agent_explorer.errors import (
    AgentError,
    AgentLogFormatError,
    AgentMachineVersionMismatchError,
    AgentReplayDivergenceError,
)
from agent_explorer.eventlog.replay import replay

from .machines import APPROVE, agent_machine, ask, drafted, live_states, looked_up, record, usage

# The package exports the function `replay`, which shadows the module of the same name.
replay_module = importlib.import_module("agent_explorer.eventlog.replay")


def test_replay_equals_the_live_fold_and_checks_every_hash(machine: Any, log: list[dict[str, Any]]) -> None:
    live = live_states(machine, log)[-1]
    result = replay(machine, log, verify="strict")
    assert result.persisted_snapshot == machine.get_persisted_snapshot(live)
    assert result.snapshot.value == live.value == "idle"
    assert result.snapshot.context["approved"] == 6
    assert result.length == len(log)
    assert result.checked == len(log)
    assert result.state_hash == log[-1]["verification"]["stateHash"]


def test_every_prefix_is_the_state_as_of_that_entry(machine: Any, log: list[dict[str, Any]]) -> None:
    live = live_states(machine, log)
    for n in range(1, len(log) + 1):
        assert replay(machine, log[:n]).persisted_snapshot == machine.get_persisted_snapshot(live[n - 1])


def test_usage_entries_do_not_transition_and_carry_the_unchanged_hash(machine: Any) -> None:
    log = record(machine, [ask("q"), usage(), usage(30), drafted("d")])
    assert [e["event"]["type"] for e in log[1:4]] == ["ASK", "@agent.usage", "@agent.usage"]
    assert log[1]["verification"] == log[2]["verification"] == log[3]["verification"]
    assert replay(machine, log[:2]).persisted_snapshot == replay(machine, log[:4]).persisted_snapshot
    assert replay(machine, log, verify="strict").snapshot.value == "deciding"


def test_streaming_entries_fold_the_same(machine: Any, log: list[dict[str, Any]]) -> None:
    streamed = replay(machine, iter(log))
    assert streamed.persisted_snapshot == replay(machine, log).persisted_snapshot
    assert streamed.length == len(log)


@pytest.mark.parametrize("entries", [[], "no-init"], ids=["empty", "first-entry-not-init"])
def test_a_log_without_an_init_entry_is_rejected(machine: Any, log: list[dict[str, Any]], entries: Any) -> None:
    if entries == "no-init":
        entries = log[1:]
    with pytest.raises(AgentLogFormatError) as caught:
        replay(machine, entries)
    assert caught.value.code == "log-format"
    assert caught.value.index == 0
    assert "@agent.init" in str(caught.value)


def test_a_second_init_entry_is_rejected_at_its_index(machine: Any, log: list[dict[str, Any]]) -> None:
    spliced = [*log[:5], {**log[0], "index": 5}, *log[5:]]
    with pytest.raises(AgentLogFormatError) as caught:
        replay(machine, spliced, verify=False)
    assert caught.value.index == 5


def test_an_entry_of_another_version_is_rejected_before_it_is_folded(machine: Any, log: list[dict[str, Any]]) -> None:
    tampered = copy.deepcopy(log)
    tampered[4]["machineVersion"] = "other"
    # Its event would not even fold (unknown shape); the version check comes first.
    tampered[4]["event"] = {"type": "xstate.done.actor.draft", "output": None}
    with pytest.raises(AgentMachineVersionMismatchError) as caught:
        replay(machine, tampered)
    assert caught.value.code == "machine-version-mismatch"
    assert caught.value.index == 4
    assert "other" in str(caught.value) and machine.version in str(caught.value)


def test_an_entry_of_another_machine_id_is_rejected(machine: Any, log: list[dict[str, Any]]) -> None:
    tampered = copy.deepcopy(log)
    tampered[2]["machineId"] = "someone-else"
    with pytest.raises(AgentMachineVersionMismatchError) as caught:
        replay(machine, tampered, verify=False)
    assert caught.value.index == 2


def test_an_input_init_entry_of_another_version_is_rejected(machine: Any, log: list[dict[str, Any]]) -> None:
    tampered = copy.deepcopy(log)
    tampered[0]["machineVersion"] = "1"
    with pytest.raises(AgentMachineVersionMismatchError) as caught:
        replay(machine, tampered)
    assert caught.value.index == 0


def test_the_init_with_snapshot_entry_is_exempt(machine: Any, log: list[dict[str, Any]]) -> None:
    mid = replay(machine, log[:4]).persisted_snapshot
    segment = record(machine, [drafted("later"), APPROVE], snapshot=mid)
    segment[0]["machineVersion"] = "recorded-by-the-old-version"
    result = replay(machine, segment, verify="strict")
    assert result.snapshot.value == "acting"


def test_journaled_completions_apply_by_child_id_after_a_restore(machine: Any) -> None:
    # A snapshot taken while "draft" was in flight, restored purely: the journaled completion
    # still finds the child by its persisted id.
    in_flight = replay(machine, record(machine, [ask("q")])).persisted_snapshot
    assert "draft" in in_flight["children"]
    resumed = record(machine, [drafted("answer")], snapshot=in_flight)
    result = replay(machine, resumed, verify="strict")
    assert result.snapshot.value == "deciding"
    assert result.snapshot.context["answer"] == "answer"
    assert "draft" not in result.persisted_snapshot["children"]


def test_a_wrong_hash_raises_with_both_hashes(machine: Any, log: list[dict[str, Any]]) -> None:
    tampered = copy.deepcopy(log)
    tampered[7]["verification"]["stateHash"] = "0" * 64
    with pytest.raises(AgentReplayDivergenceError) as caught:
        replay(machine, tampered)
    error = caught.value
    assert (error.index, error.kind, error.event_id) == (7, "state", log[7]["id"])
    assert error.expected_hash == "0" * 64
    assert error.actual_hash == log[7]["verification"]["stateHash"]
    assert error.code == "replay-divergence"
    # verify=False checks nothing.
    assert replay(machine, tampered, verify=False).state_hash == log[-1]["verification"]["stateHash"]


def test_strict_requires_a_hash_on_every_entry(machine: Any, log: list[dict[str, Any]]) -> None:
    tampered = copy.deepcopy(log)
    del tampered[3]["verification"]
    assert replay(machine, tampered).checked == len(log) - 1
    with pytest.raises(AgentReplayDivergenceError) as caught:
        replay(machine, tampered, verify="strict")
    assert (caught.value.index, caught.value.kind, caught.value.event_id) == (3, "missing-verification", log[3]["id"])


def test_strict_checks_the_init_entry_too(machine: Any) -> None:
    log = record(machine, [ask("q")], hashes=False)
    with pytest.raises(AgentReplayDivergenceError) as caught:
        replay(machine, log, verify="strict")
    assert (caught.value.index, caught.value.kind) == (0, "missing-verification")
    assert replay(machine, log).checked == 0


def test_an_unknown_verify_mode_is_an_error(machine: Any, log: list[dict[str, Any]]) -> None:
    with pytest.raises(AgentError) as caught:
        replay(machine, log, verify="loose")  # type: ignore[arg-type]
    assert caught.value.code == "invalid-verify-mode"


def test_a_malformed_entry_is_named_by_index(machine: Any, log: list[dict[str, Any]]) -> None:
    tampered = copy.deepcopy(log)
    del tampered[6]["event"]
    with pytest.raises(AgentLogFormatError) as caught:
        replay(machine, tampered)
    assert caught.value.index == 6


def test_effects_come_from_the_owed_function_given(machine: Any, log: list[dict[str, Any]]) -> None:
    seen: list[tuple[Any, ...]] = []

    def owed(m: Any, entries: Any) -> list[Any]:
        seen.append((m, list(entries)))
        return [{"kind": "task", "id": "draft"}]

    result = replay(machine, log[:2], owed=owed)  # ASK: the draft request is owed
    assert seen == []  # derived on first read only
    assert result.effects == [{"kind": "task", "id": "draft"}]
    assert result.effects is result.effects  # and once
    ((m, entries),) = seen
    assert m is machine and entries == log[:2]
    # The log layer alone cannot say what is owed, and says so instead of answering [].
    with pytest.raises(AgentError) as caught:
        replay(machine, log[:2]).effects  # noqa: B018
    assert caught.value.code == "no-effect-ledger"
    # The package's replay is the log layer's fold with the runtime's ledger.
    import agent_explorer

    assert [e.request_id for e in agent_explorer.replay(machine, log[:2]).effects] == ["draft#1"]


def test_replay_never_runs_actors_or_mutates_entries(machine: Any, log: list[dict[str, Any]]) -> None:
    before = copy.deepcopy(log)
    replay(machine, log, verify="strict")
    assert log == before
    assert state_hash(replay(machine, log).persisted_snapshot) == log[-1]["verification"]["stateHash"]


def test_a_recording_machine_with_a_declared_version_stamps_it() -> None:
    machine = agent_machine(version="7")
    log = record(machine, [ask("q"), drafted("d"), APPROVE, looked_up(1)])
    assert {e["machineVersion"] for e in log} == {"7"}
    assert replay(machine, log, verify="strict").snapshot.context["approved"] == 1
    with pytest.raises(AgentMachineVersionMismatchError):
        replay(agent_machine(version="8"), log)


def test_hashes_only_what_it_must(machine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = replay_module.check_state_hash  # what replay hashes with (canonical/verify_hash.py)

    def counting(value: Any, expected: str | None) -> str:
        calls.append(1)
        return real(value, expected)

    monkeypatch.setattr(replay_module, "check_state_hash", counting)
    # init, ASK, then three APPROVEs the thinking state ignores and a usage record: the ignored
    # events and the usage record leave the very same snapshot, so its hash is reused.
    log = record(machine, [ask("q"), APPROVE, APPROVE, usage(), APPROVE])
    calls.clear()
    assert replay(machine, log, verify="strict").checked == 6
    assert len(calls) == 2
    calls.clear()
    unhashed = record(machine, [ask("q"), drafted("d")], hashes=False)
    calls.clear()
    replay(machine, unhashed)  # verify=True hashes only entries that carry a hash: none here
    replay(machine, log, verify=False)
    assert calls == []
