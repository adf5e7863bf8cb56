"""Version bridge: old events + old snapshot -> a new segment for the new machine version."""

from __future__ import annotations

from typing import Any

import pytest

from agent_explorer.errors import AgentError, AgentMachineVersionMismatchError, AgentSnapshotDivergedError
from agent_explorer.eventlog.replay import replay
from agent_explorer.eventlog.snapshot_cache import persist_snapshot
from agent_explorer.eventlog.version_bridge import bridge_version

from .machines import APPROVE, agent_machine, ask, conversation, drafted, looked_up, record


def machines_with_migrate(migrate: Any) -> Any:
    """Version 2 of the agent: same chart, declaring its own migration (config key `migrate`)."""
    return agent_machine(version="2", migrate=migrate)


def v1_to_v2(snapshot: dict[str, Any], from_version: str) -> dict[str, Any]:
    if from_version == "1":
        return {**snapshot, "context": {**snapshot["context"], "locale": "en"}}
    return snapshot


@pytest.fixture
def v1() -> Any:
    return agent_machine(version="1")


@pytest.fixture
def old_log(v1: Any) -> list[dict[str, Any]]:
    return record(v1, conversation(2), input={"question": "q"})


def test_old_events_plus_old_snapshot_give_a_new_segment(v1: Any, old_log: list[dict[str, Any]]) -> None:
    v2 = machines_with_migrate(v1_to_v2)
    old_snapshot = persist_snapshot(v1, replay(v1, old_log).snapshot, old_log, "thread-1")
    segment = bridge_version(v2, old_log, old_snapshot)
    (init,) = segment
    assert init["index"] == 0 and init["event"]["type"] == "@agent.init"
    assert (init["machineId"], init["machineVersion"]) == ("agent", "2")
    assert init["metadata"]["migratedFrom"] == {
        "machineId": "agent", "version": "1", "logId": "thread-1", "logIndex": len(old_log),
    }
    migrated = init["event"]["snapshot"]
    assert migrated["context"]["locale"] == "en"
    assert migrated["context"]["approved"] == 2
    assert "agentMeta" not in migrated
    # The new segment is self-contained: it replays under v2 and grows like any log.
    resumed = replay(v2, segment, verify="strict")
    assert resumed.snapshot.value == "idle"
    more = record(v2, [ask("next"), drafted("d"), APPROVE, looked_up(3)], snapshot=migrated)
    assert replay(v2, more, verify="strict").snapshot.context["approved"] == 3
    # The old log stays history under v1, and v2 refuses to fold it.
    assert replay(v1, old_log, verify="strict").snapshot.context.get("locale") is None
    with pytest.raises(AgentMachineVersionMismatchError):
        replay(v2, old_log)


def test_old_events_without_a_snapshot_raise(v1: Any, old_log: list[dict[str, Any]]) -> None:
    v2 = machines_with_migrate(v1_to_v2)
    with pytest.raises(AgentMachineVersionMismatchError) as caught:
        bridge_version(v2, old_log, None)
    assert caught.value.code == "machine-version-mismatch"
    assert "no snapshot" in str(caught.value)


def test_same_version_without_snapshot_is_nothing_to_bridge(v1: Any, old_log: list[dict[str, Any]]) -> None:
    assert bridge_version(v1, old_log, None) == old_log


def test_a_snapshot_that_is_not_the_old_tail_is_refused(v1: Any, old_log: list[dict[str, Any]]) -> None:
    v2 = machines_with_migrate(v1_to_v2)
    stale = replay(v1, old_log[:5]).persisted_snapshot
    with pytest.raises(AgentSnapshotDivergedError):
        bridge_version(v2, old_log, stale)


def test_a_failing_migration_names_the_machine(v1: Any, old_log: list[dict[str, Any]]) -> None:
    def broken(snapshot: dict[str, Any], from_version: str) -> dict[str, Any]:
        raise KeyError("contextz")

    v2 = machines_with_migrate(broken)
    with pytest.raises(AgentError) as caught:
        bridge_version(v2, old_log, replay(v1, old_log).persisted_snapshot)
    assert caught.value.code == "migration-failed"
    assert "'agent'" in str(caught.value) and "'2'" in str(caught.value)


def test_without_migrate_the_snapshot_is_taken_as_is(v1: Any, old_log: list[dict[str, Any]]) -> None:
    v3 = agent_machine(version="3")
    (init,) = bridge_version(v3, old_log, replay(v1, old_log).persisted_snapshot, log_id="t")
    assert init["event"]["snapshot"] == replay(v1, old_log).persisted_snapshot
    assert init["metadata"]["migratedFrom"]["logId"] == "t"
