"""machine.definition is JSON the explorer draws from; machine.version is its structural hash."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from agent_explorer.canonical.jcs import state_hash
from agent_explorer.engine import assign, from_promise, initial_transition, not_, setup


async def _task(input: Any = None) -> Any:
    return None


def _config() -> dict[str, Any]:
    return {
        "id": "agent",
        "initial": "idle",
        "context": {"n": 0},
        "states": {
            "idle": {"on": {"START": {"target": "thinking", "guard": {"type": "ready", "params": {"min": 1}}, "actions": ["count"]}}},
            "thinking": {
                "tags": ["busy"],
                "invoke": {"id": "think", "src": "think", "onDone": "done", "onError": "idle"},
                "after": {"1000": {"target": "idle"}},
                "on": {"CANCEL": ".", "STOP": {"target": "idle", "guard": not_("ready")}},
            },
            "done": {"type": "final", "output": {"ok": True}},
        },
    }


def _machine(config: dict[str, Any] | None = None, **extra: Any) -> Any:
    impl: dict[str, Any] = {
        "guards": {"ready": lambda c, e, p: True},
        "actions": {"count": assign({"n": lambda c, e, p: c["n"] + 1}), "other": lambda c, e, p: None},
        "actors": {"think": from_promise(_task)},
    }
    impl.update(extra)
    return setup(**impl).create_machine(config or _config())


def test_definition_is_json_and_has_the_documented_shape() -> None:
    d = _machine().definition
    json.dumps(d)  # JSON-serializable as is
    assert d["id"] == "agent" and d["type"] == "compound" and d["initial"]["target"] == ["#agent.idle"]
    idle = d["states"]["idle"]
    (start,) = idle["on"]["START"]
    assert start == {
        "id": "#agent.idle:on:START:0",
        "source": "agent.idle",
        "eventType": "START",
        "target": ["#agent.thinking"],
        "guard": {"type": "ready", "params": {"min": 1}},
        "actions": [{"type": "count"}],
        "reenter": False,
    }
    thinking = d["states"]["thinking"]
    assert thinking["invoke"] == [{"id": "think", "src": "think"}]
    assert set(thinking["on"]) == {"CANCEL", "STOP", "xstate.done.actor.think", "xstate.error.actor.think"}
    assert thinking["after"][0]["id"] == "#agent.thinking:after:1000:0"
    assert thinking["after"][0]["eventType"] == "xstate.after.1000.agent.thinking"
    assert thinking["on"]["STOP"][0]["guard"] == {"type": "xstate.not", "params": {"guards": [{"type": "ready"}]}}
    assert thinking["entry"] == [] and thinking["tags"] == ["busy"]
    assert d["states"]["done"]["output"] == {"ok": True}
    assert [d["states"][k]["order"] for k in ("idle", "thinking", "done")] == [1, 2, 3]


def test_inline_callables_appear_by_qualified_name() -> None:
    def shout(c: Any, e: Any, p: Any) -> None:
        return None

    m = setup().create_machine({"id": "m", "initial": "a", "states": {"a": {"entry": shout}}})
    assert m.definition["states"]["a"]["entry"] == [{"type": "inline:test_inline_callables_appear_by_qualified_name.<locals>.shout"}]


def test_version_is_declared_or_the_structural_hash() -> None:
    m = _machine()
    assert m.version == state_hash(m.definition)
    declared = _config()
    declared["version"] = "7"
    assert _machine(declared).version == "7"
    # The same structure always hashes the same, across builds and provide().
    assert _machine().version == m.version
    assert m.provide(actions={"count": lambda c, e, p: None}).version == m.version


def _edit_target(c: dict[str, Any]) -> None:
    c["states"]["idle"]["on"]["START"]["target"] = "done"


def _edit_guard(c: dict[str, Any]) -> None:
    c["states"]["idle"]["on"]["START"]["guard"] = {"type": "other", "params": {"min": 1}}


def _edit_action(c: dict[str, Any]) -> None:
    c["states"]["idle"]["on"]["START"]["actions"] = ["other"]


def _edit_state(c: dict[str, Any]) -> None:
    c["states"]["extra"] = {}


def _edit_event(c: dict[str, Any]) -> None:
    c["states"]["thinking"]["on"]["CANCELLED"] = c["states"]["thinking"]["on"].pop("CANCEL")


@pytest.mark.parametrize("edit", [_edit_target, _edit_guard, _edit_action, _edit_state, _edit_event],
                         ids=["target", "guard-name", "action-name", "state", "event"])
def test_version_changes_with_structure(edit: Any) -> None:
    before = _machine()
    config = copy.deepcopy(_config())
    edit(config)
    after = _machine(config, guards={"ready": lambda c, e, p: True, "other": lambda c, e, p: True})
    assert after.version != before.version


def test_provide_replaces_implementations_and_keeps_extensions() -> None:
    calls: list[str] = []
    m = setup(actions={"hello": lambda c, e, p: calls.append("old")}, extensions={"schemas": {"X": 1}}).create_machine(
        {"id": "m", "initial": "a", "states": {"a": {"entry": "hello"}}}
    )
    assert m.extensions == {"schemas": {"X": 1}}
    m2 = m.provide(actions={"hello": lambda c, e, p: calls.append("new")})
    assert m2 is not m and m2.extensions == {"schemas": {"X": 1}} and m2.definition == m.definition
    for action in initial_transition(m2)[1]:
        action.exec()
    assert calls == ["new"]


def test_migrate_is_kept_on_the_machine() -> None:
    def migrate(snapshot: dict[str, Any], from_version: Any) -> dict[str, Any]:
        return snapshot

    config = _config()
    assert _machine(config).migrate is None
    config["migrate"] = migrate
    assert _machine(config).migrate is migrate


