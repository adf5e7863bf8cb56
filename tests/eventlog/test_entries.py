"""Entries: building them (init / replay), checking their shape, forking, lineage, error payloads."""

from __future__ import annotations

import copy
import math
import re
import sys
import types
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from agent_explorer.canonical.jcs import state_hash
from agent_explorer.canonical.strict import assert_json_serializable
from agent_explorer.errors import (
    AgentError,
    AgentLogFormatError,
    NonSerializableAgentEventError,
)
from agent_explorer.eventlog.entries import (
    INIT_EVENT_TYPE,
    USAGE_EVENT_TYPE,
    assert_agent_log_entry,
    create_replay_entry,
    fork_event_log,
    format_recorded_at,
    get_log_execution_id,
    init_entry,
    normalize_error,
)

from .conftest import (
    StandInMachine,
    StandInSnapshot,
    build_log,
    counter_machine,
    make_clock,
)

HEX64 = re.compile(r"[0-9a-f]{64}")


# ---------------------------------------------------------------------------------------------
# init_entry


def test_init_entry_with_input_hashes_the_engines_initial_state() -> None:
    from agent_explorer.engine import initial_transition

    machine = counter_machine()
    entry = init_entry(machine, input={"start": 5}, now=make_clock(), id="first")
    snapshot, _ = initial_transition(machine, input={"start": 5})
    assert entry == {
        "schemaVersion": 1,
        "id": "first",
        "index": 0,
        "recordedAt": "2026-01-01T00:00:00.000Z",
        "machineId": "counter",
        "machineVersion": "1",
        "event": {"type": INIT_EVENT_TYPE, "input": {"start": 5}},
        "metadata": {"executionId": entry["metadata"]["executionId"]},
        "verification": {"stateHash": state_hash(machine.get_persisted_snapshot(snapshot))},
    }
    assert machine.get_persisted_snapshot(snapshot)["context"] == {"count": 5}
    assert_agent_log_entry(entry, index=0)


def test_init_entry_without_input_carries_no_input_key() -> None:
    entry = init_entry(counter_machine())
    assert entry["event"] == {"type": INIT_EVENT_TYPE}
    assert HEX64.fullmatch(entry["verification"]["stateHash"])


def test_init_entry_with_a_snapshot_hashes_that_snapshot(standin: StandInMachine) -> None:
    persisted = standin.get_persisted_snapshot(StandInSnapshot("busy", {"n": 1}))
    entry = init_entry(standin, snapshot=persisted, metadata={"host": "a"}, now=make_clock())
    assert entry["event"] == {"type": INIT_EVENT_TYPE, "snapshot": persisted}
    assert entry["verification"]["stateHash"] == state_hash(persisted)
    assert entry["machineId"] == "standin" and entry["machineVersion"] == "7"
    assert entry["metadata"]["host"] == "a"
    # The entry owns its copy: the caller mutating its dicts does not rewrite the journal.
    persisted["context"]["n"] = 99
    assert entry["event"]["snapshot"]["context"]["n"] == 1
    assert_agent_log_entry(entry, index=0)


def test_init_entry_without_the_engine_uses_the_machines_own_initial_transition(
    standin: StandInMachine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "agent_explorer.engine", types.ModuleType("agent_explorer.engine"))
    entry = init_entry(standin, input={"q": "hi"})
    expected = standin.get_persisted_snapshot(StandInSnapshot("idle", {"input": {"q": "hi"}, "count": 0}))
    assert entry["verification"]["stateHash"] == state_hash(expected)


def test_init_entry_without_any_initial_transition_says_what_to_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "agent_explorer.engine", types.ModuleType("agent_explorer.engine"))

    class Bare:
        id = "bare"
        version = "1"

        def get_persisted_snapshot(self, snapshot: Any) -> Any:
            return snapshot

    with pytest.raises(AgentError) as caught:
        init_entry(Bare(), input=1)
    assert caught.value.code == "engine-unavailable"
    assert "snapshot=" in str(caught.value)


def test_execution_id_is_generated_once_and_kept_when_given(standin: StandInMachine) -> None:
    persisted = standin.get_persisted_snapshot(StandInSnapshot("idle"))
    generated = {init_entry(standin, snapshot=persisted)["metadata"]["executionId"] for _ in range(50)}
    assert len(generated) == 50
    given = {"executionId": "lineage-1"}
    assert init_entry(standin, snapshot=persisted, metadata=given)["metadata"] == given
    with pytest.raises(AgentError, match="executionId"):
        init_entry(standin, snapshot=persisted, metadata={"executionId": 3})


def test_init_entry_refuses_input_and_snapshot_together(standin: StandInMachine) -> None:
    with pytest.raises(AgentError) as caught:
        init_entry(standin, input={"a": 1}, snapshot={"status": "active"})
    assert caught.value.code == "invalid-init-entry"


def test_init_entry_refuses_non_json_input_with_its_path() -> None:
    with pytest.raises(NonSerializableAgentEventError) as caught:
        init_entry(counter_machine(), input={"start": 1, "when": datetime.now(UTC)})
    assert caught.value.path == "event.input.when"


# ---------------------------------------------------------------------------------------------
# create_replay_entry


def test_replay_entry_stamps_the_hash_of_the_persisted_snapshot_after() -> None:
    from agent_explorer.engine import initial_transition, transition

    machine = counter_machine()
    state, _ = initial_transition(machine, input=None)
    state, _ = transition(machine, state, {"type": "INC", "by": 2})
    entry = create_replay_entry(
        machine, {"type": "INC", "by": 2}, 1, snapshot_after=state, causation_id="first",
        metadata={"source": "ui"}, now=make_clock(), id="second",
    )
    assert entry == {
        "schemaVersion": 1,
        "id": "second",
        "index": 1,
        "recordedAt": "2026-01-01T00:00:00.000Z",
        "machineId": "counter",
        "machineVersion": "1",
        "event": {"type": "INC", "by": 2},
        "causationId": "first",
        "metadata": {"source": "ui"},
        "verification": {"stateHash": state_hash(machine.get_persisted_snapshot(state))},
    }
    assert machine.get_persisted_snapshot(state)["context"] == {"count": 2}
    assert_agent_log_entry(entry, index=1)


def test_replay_entry_without_snapshot_has_no_verification(standin: StandInMachine) -> None:
    entry = create_replay_entry(standin, {"type": "PING"}, 3)
    assert "verification" not in entry and "causationId" not in entry and "metadata" not in entry
    assert_agent_log_entry(entry, index=3)


def test_replay_entry_copies_the_event(standin: StandInMachine) -> None:
    event = {"type": "ADD", "items": [1, 2]}
    entry = create_replay_entry(standin, event, 1)
    event["items"].append(3)
    assert entry["event"] == {"type": "ADD", "items": [1, 2]}


@pytest.mark.parametrize(
    ("event", "index", "code"),
    [
        pytest.param({"kind": "x"}, 1, "invalid-event", id="no-type"),
        pytest.param({"type": 5}, 1, "invalid-event", id="type-not-str"),
        pytest.param("PING", 1, "invalid-event", id="not-a-dict"),
        pytest.param({"type": INIT_EVENT_TYPE}, 1, "reserved-event-type", id="init-is-reserved"),
        pytest.param({"type": "PING"}, -1, "invalid-entry-field", id="negative-index"),
        pytest.param({"type": "PING"}, True, "invalid-entry-field", id="bool-index"),
        pytest.param({"type": "PING"}, 1.0, "invalid-entry-field", id="float-index"),
    ],
)
def test_replay_entry_refuses_bad_arguments(
    standin: StandInMachine, event: Any, index: Any, code: str
) -> None:
    with pytest.raises(AgentError) as caught:
        create_replay_entry(standin, event, index)
    assert caught.value.code == code


def test_replay_entry_refuses_non_json_payloads_with_paths(standin: StandInMachine) -> None:
    with pytest.raises(NonSerializableAgentEventError) as caught:
        create_replay_entry(standin, {"type": "X", "items": [0, 1, 2, {"when": math.nan}]}, 1)
    assert caught.value.path == "event.items[3].when"
    with pytest.raises(NonSerializableAgentEventError) as caught:
        create_replay_entry(standin, {"type": "X"}, 1, metadata={"tags": {"a", "b"}})
    assert caught.value.path == "metadata.tags"


def test_replay_entry_refuses_a_non_json_snapshot(standin: StandInMachine) -> None:
    with pytest.raises(NonSerializableAgentEventError) as caught:
        create_replay_entry(standin, {"type": "X"}, 1, snapshot_after=StandInSnapshot("s", {"t": (1,)}))
    assert caught.value.path == "context.t"


def test_entry_ids_are_unique(standin: StandInMachine) -> None:
    ids = {create_replay_entry(standin, {"type": "PING"}, i)["id"] for i in range(2000)}
    assert len(ids) == 2000


# ---------------------------------------------------------------------------------------------
# recordedAt


@pytest.mark.parametrize(
    ("moment", "text"),
    [
        pytest.param(datetime(2026, 3, 4, 5, 6, 7, 891_999, tzinfo=UTC), "2026-03-04T05:06:07.891Z", id="ms-truncated"),
        pytest.param(datetime(2026, 1, 1, 1, 30, tzinfo=timezone(timedelta(hours=2))), "2025-12-31T23:30:00.000Z", id="converted"),
        pytest.param(datetime(1, 1, 1, tzinfo=UTC), "0001-01-01T00:00:00.000Z", id="year-padded"),
    ],
)
def test_recorded_at_is_javascripts_to_iso_string(moment: datetime, text: str) -> None:
    assert format_recorded_at(moment) == text


def test_a_naive_clock_is_refused(standin: StandInMachine) -> None:
    with pytest.raises(AgentError) as caught:
        create_replay_entry(standin, {"type": "PING"}, 1, now=lambda: datetime(2026, 1, 1))
    assert caught.value.code == "invalid-clock"


def test_the_default_clock_is_utc_now(standin: StandInMachine) -> None:
    before = datetime.now(UTC) - timedelta(seconds=1)
    stamp = create_replay_entry(standin, {"type": "PING"}, 1)["recordedAt"]
    moment = datetime.fromisoformat(stamp)
    assert stamp.endswith("Z") and before <= moment <= datetime.now(UTC)


# ---------------------------------------------------------------------------------------------
# assert_agent_log_entry


def good_entry() -> dict[str, Any]:
    return {
        "schemaVersion": 1,
        "id": "e1",
        "index": 4,
        "recordedAt": "2026-01-01T00:00:00.000Z",
        "machineId": "m",
        "machineVersion": "1",
        "event": {"type": "GO", "items": [1, {"when": "x"}]},
        "causationId": "e0",
        "metadata": {"k": "v"},
        "verification": {"stateHash": "a" * 64},
    }


def test_a_good_entry_passes_with_and_without_optional_fields() -> None:
    assert_agent_log_entry(good_entry())
    assert_agent_log_entry(good_entry(), index=4)
    minimal = {k: v for k, v in good_entry().items() if k not in ("causationId", "metadata", "verification")}
    assert_agent_log_entry(minimal)
    for stamp in ("2026-01-01T00:00:00Z", "2026-01-01T00:00:00.123456+00:00", "2026-12-31T23:59:59.999999999Z"):
        assert_agent_log_entry({**minimal, "recordedAt": stamp})


def _without(key: str) -> dict[str, Any]:
    entry = good_entry()
    del entry[key]
    return entry


def _with(**changes: Any) -> dict[str, Any]:
    return {**good_entry(), **changes}


BAD_ENTRIES = [
    pytest.param([1], "not an object", None, id="not-a-dict"),
    pytest.param(_without("id"), "missing id", 4, id="missing-id"),
    pytest.param(_without("event"), "missing event", 4, id="missing-event"),
    pytest.param(_with(causationID="x"), "unknown field(s) causationID", 4, id="unknown-key"),
    pytest.param(_with(schemaVersion=2), "schemaVersion must be 1", 4, id="schema-2"),
    pytest.param(_with(schemaVersion=True), "schemaVersion must be 1", 4, id="schema-bool"),
    pytest.param(_with(schemaVersion="1"), "schemaVersion must be 1", 4, id="schema-str"),
    pytest.param(_with(id=""), "id must be a non-empty string", 4, id="empty-id"),
    pytest.param(_with(id=7), "id must be a non-empty string", 4, id="int-id"),
    pytest.param(_with(index=-1), "index must be an int >= 0", None, id="negative-index"),
    pytest.param(_with(index=True), "index must be an int >= 0", None, id="bool-index"),
    pytest.param(_with(index=4.0), "index must be an int >= 0", None, id="float-index"),
    pytest.param(_with(index="4"), "index must be an int >= 0", None, id="str-index"),
    pytest.param(_with(recordedAt="2026-01-01"), "recordedAt", 4, id="date-only"),
    pytest.param(_with(recordedAt="2026-01-01T00:00:00.000+01:00"), "recordedAt", 4, id="not-utc"),
    pytest.param(_with(recordedAt="2026-01-01T00:00:00.000"), "recordedAt", 4, id="no-zone"),
    pytest.param(_with(recordedAt="2026-02-30T00:00:00.000Z"), "recordedAt", 4, id="feb-30"),
    pytest.param(_with(recordedAt="2026-01-01T24:00:00.000Z"), "recordedAt", 4, id="hour-24"),
    pytest.param(_with(recordedAt=1767225600000), "recordedAt", 4, id="epoch-number"),
    pytest.param(_with(machineId=1), "machineId must be a string", 4, id="machine-id"),
    pytest.param(_with(machineVersion=None), "machineVersion must be a string", 4, id="machine-version"),
    pytest.param(_with(event="GO"), "event must be an object", 4, id="event-str"),
    pytest.param(_with(event={"kind": "GO"}), "event.type must be a string", 4, id="event-no-type"),
    pytest.param(_with(event={"type": None}), "event.type must be a string", 4, id="event-null-type"),
    pytest.param(_with(causationId=3), "causationId must be a string", 4, id="causation"),
    pytest.param(_with(metadata=[]), "metadata must be an object", 4, id="metadata-list"),
    pytest.param(_with(verification={"stateHash": "A" * 64}), "64 lowercase hex", 4, id="hash-upper"),
    pytest.param(_with(verification={"stateHash": "a" * 63}), "64 lowercase hex", 4, id="hash-short"),
    pytest.param(_with(verification={"stateHash": "a" * 64, "x": 1}), "verification must be", 4, id="hash-extra"),
    pytest.param(_with(verification=None), "verification must be", 4, id="verification-null"),
]


@pytest.mark.parametrize(("entry", "fragment", "index"), BAD_ENTRIES)
def test_bad_entries_are_named(entry: Any, fragment: str, index: int | None) -> None:
    with pytest.raises(AgentLogFormatError) as caught:
        assert_agent_log_entry(entry)
    assert fragment in str(caught.value)
    assert caught.value.index == index
    assert caught.value.code == "log-format"


def test_the_expected_index_is_checked_and_reported() -> None:
    with pytest.raises(AgentLogFormatError, match="has index 4, expected 5") as caught:
        assert_agent_log_entry(good_entry(), index=5)
    assert caught.value.index == 4
    with pytest.raises(AgentLogFormatError) as caught:
        assert_agent_log_entry(_with(index=None), index=9)
    assert caught.value.index == 9


def test_non_json_inside_an_entry_names_the_path() -> None:
    entry = good_entry()
    entry["event"]["items"][1]["when"] = datetime.now(UTC)
    with pytest.raises(NonSerializableAgentEventError) as caught:
        assert_agent_log_entry(entry)
    assert caught.value.path == "event.items[1].when"
    assert "Log entry 4" in str(caught.value)
    entry = good_entry()
    entry["metadata"]["ratio"] = math.inf
    with pytest.raises(NonSerializableAgentEventError) as caught:
        assert_agent_log_entry(entry)
    assert caught.value.path == "metadata.ratio"


def test_checking_never_mutates() -> None:
    entry = good_entry()
    before = copy.deepcopy(entry)
    assert_agent_log_entry(entry)
    assert entry == before


# ---------------------------------------------------------------------------------------------
# fork_event_log, get_log_execution_id


def test_fork_is_the_prefix_and_keeps_the_lineage() -> None:
    entries = build_log(10)
    branch = fork_event_log(entries, 4)
    assert branch == entries[:4] and branch is not entries
    assert [e["index"] for e in branch] == [0, 1, 2, 3]
    assert get_log_execution_id(branch) == get_log_execution_id(entries) == "exec-t"
    assert fork_event_log(entries, 1) == entries[:1]
    assert fork_event_log(entries, 10) == entries
    branch.append({"x": 1})
    assert len(entries) == 10  # the parent list is untouched


@pytest.mark.parametrize("up_to", [0, -1, 11, True, 2.0, "3", None])
def test_fork_bounds_are_checked(up_to: Any) -> None:
    with pytest.raises(AgentError) as caught:
        fork_event_log(build_log(10), up_to)
    assert caught.value.code == "invalid-fork-index"
    assert "[1, 10]" in str(caught.value)


def test_fork_refuses_a_log_without_its_init_entry() -> None:
    entries = build_log(5)
    with pytest.raises(AgentError) as caught:
        fork_event_log(entries[1:], 2)
    assert caught.value.code == "missing-init-entry"
    with pytest.raises(AgentError) as caught:
        fork_event_log([], 1)
    assert caught.value.code == "invalid-fork-index"


def test_execution_id_is_none_when_absent() -> None:
    assert get_log_execution_id([]) is None
    entries = build_log(3)
    assert get_log_execution_id(entries[1:]) is None
    init = {**entries[0]}
    del init["metadata"]
    assert get_log_execution_id([init]) is None


# ---------------------------------------------------------------------------------------------
# normalize_error


def test_exceptions_normalise_with_their_cause_chain() -> None:
    try:
        try:
            raise KeyError("missing")
        except KeyError as inner:
            raise RuntimeError("lookup failed") from inner
    except RuntimeError as error:
        payload = normalize_error(error)
    assert payload == {
        "name": "RuntimeError",
        "message": "lookup failed",
        "cause": {"name": "KeyError", "message": "'missing'"},
    }
    assert_json_serializable(payload)


def test_agent_errors_use_their_message_and_others_become_error() -> None:
    assert normalize_error(AgentError("boom", code="x")) == {"name": "AgentError", "message": "boom"}
    assert normalize_error("model down") == {"name": "Error", "message": "model down"}
    assert normalize_error(404) == {"name": "Error", "message": "404"}
    assert normalize_error({"name": "TypeError", "message": "bad", "cause": {"code": 1}}) == {
        "name": "TypeError", "message": "bad", "cause": {"code": 1},
    }
    odd = normalize_error({"message": ["x"], "cause": ValueError("v")})
    assert odd == {"name": "Error", "message": '["x"]', "cause": {"name": "ValueError", "message": "v"}}


def test_usage_type_constant_matches_the_wire() -> None:
    assert USAGE_EVENT_TYPE == "@agent.usage" and INIT_EVENT_TYPE == "@agent.init"
