"""create_machine rejects bad configs up front, naming the state path and the fix."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_explorer.engine import create_machine, raise_, setup, spawn_child
from agent_explorer.errors import MachineConfigError


def _error(config: dict[str, Any], **impl: Any) -> MachineConfigError:
    with pytest.raises(MachineConfigError) as info:
        setup(**impl).create_machine(config)
    assert info.value.code == "invalid-machine-config"
    return info.value


def test_unknown_target_names_the_state_and_the_fix() -> None:
    err = _error({"id": "m", "initial": "a", "states": {"a": {"on": {"GO": "nowhere"}}}})
    assert err.path == "#m.a"
    assert "nowhere" in err.message and "#m.a" in err.message and "GO" in err.message
    assert "Fix" in err.message


def test_unknown_id_target() -> None:
    err = _error({"id": "m", "initial": "a", "states": {"a": {"always": {"target": "#ghost"}}}})
    assert err.path == "#m.a" and "#ghost" in err.message


def test_unknown_child_target() -> None:
    err = _error({"id": "m", "initial": "a", "states": {"a": {"on": {"GO": ".missing"}}, "b": {}}})
    assert err.path == "#m.a" and ".missing" in err.message


def test_root_target_without_dot_suggests_one() -> None:
    err = _error({"id": "m", "initial": "a", "on": {"GO": "a"}, "states": {"a": {}}})
    assert 'Did you mean ".a"' in err.message


def test_duplicate_id_is_accepted_and_the_later_state_takes_it() -> None:
    """As in XState (issue 22): no error; `#same` means the later state (tests/engine/test_state_ids.py)."""
    machine = setup().create_machine({"id": "m", "initial": "a", "states": {"a": {"id": "same"}, "b": {"id": "same"}}})
    assert machine.get_state_node_by_id("#same") is machine.root.states["b"]


def test_initial_that_is_not_a_child() -> None:
    err = _error({"id": "m", "initial": "zzz", "states": {"a": {}, "b": {}}})
    assert err.path == "#m" and "zzz" in err.message and "a, b" in err.message


def test_compound_without_initial() -> None:
    err = _error({"id": "m", "initial": "a", "states": {"a": {"states": {"x": {}, "y": {}}}}})
    assert err.path == "#m.a"
    assert '"initial": "x"' in err.message


@pytest.mark.parametrize(
    ("config", "needle"),
    [
        ({"id": "m", "initial": "a", "states": {"a": {"entry": "missingAction"}}}, "missingAction"),
        ({"id": "m", "initial": "a", "states": {"a": {"on": {"E": {"actions": {"type": "nope", "params": {}}}}}}}, "nope"),
        ({"id": "m", "initial": "a", "states": {"a": {"on": {"E": {"guard": "noGuard", "target": "a"}}}}}, "noGuard"),
        ({"id": "m", "initial": "a", "states": {"a": {"invoke": {"src": "noActor"}}}}, "noActor"),
        ({"id": "m", "initial": "a", "states": {"a": {"after": {"slowly": "a"}}}}, "slowly"),
    ],
    ids=["entry-action", "transition-action-with-params", "guard", "actor", "named-delay"],
)
def test_names_without_implementation(config: dict[str, Any], needle: str) -> None:
    # A JSON config only names its implementations; a missing one fails at create_machine.
    err = _error(json.loads(json.dumps(config)))
    assert needle in err.message and err.path == "#m.a"
    assert "setup(" in err.message


def test_guard_combinator_names_are_checked() -> None:
    from agent_explorer.engine import and_

    with pytest.raises(MachineConfigError, match="inner"):
        setup(guards={"outer": and_(["inner"])}).create_machine(
            {"id": "m", "initial": "a", "states": {"a": {"on": {"E": {"guard": "outer"}}}}}
        )


def test_builtin_action_references_are_checked() -> None:
    with pytest.raises(MachineConfigError, match="later"):
        setup(actions={"ping": raise_({"type": "P"}, delay="later")}).create_machine(
            {"id": "m", "initial": "a", "states": {"a": {"entry": "ping"}}}
        )
    with pytest.raises(MachineConfigError, match="worker"):
        create_machine({"id": "m", "initial": "a", "states": {"a": {"entry": spawn_child("worker")}}})


def test_cond_is_rejected_with_the_new_name() -> None:
    err = _error({"id": "m", "initial": "a", "states": {"a": {"on": {"E": {"cond": "x", "target": "a"}}}}})
    assert "guard" in err.message


def test_valid_json_config_loads() -> None:
    config = {
        "id": "m", "initial": "a", "context": {"n": 0},
        "states": {"a": {"entry": "hello", "on": {"GO": {"target": "b", "guard": {"type": "ok", "params": {"x": 1}}}}},
                   "b": {"type": "final"}},
    }
    machine = setup(actions={"hello": lambda c, e, p: None}, guards={"ok": lambda c, e, p: p["x"] == 1}).create_machine(
        json.loads(json.dumps(config))
    )
    assert machine.id == "m"
    assert set(machine.id_map) == {"m", "m.a", "m.b"}


def test_state_in_must_name_an_existing_state() -> None:
    from agent_explorer.engine import not_, state_in

    with pytest.raises(MachineConfigError, match="#ghost") as info:
        create_machine({"id": "m", "initial": "a", "states": {"a": {"on": {"E": {"guard": not_(state_in("#ghost"))}}}}})
    assert info.value.path == "#m.a"
    with pytest.raises(MachineConfigError, match="#nope"):
        setup(guards={"there": state_in("#nope")}).create_machine(
            {"id": "m", "initial": "a", "states": {"a": {"on": {"E": {"guard": "there"}}}}}
        )
    create_machine({"id": "m", "initial": "a", "states": {"a": {"on": {"E": {"guard": state_in("#m.a")}}}}})


def test_final_state_with_initial_and_children_is_accepted_and_never_entered() -> None:
    """Issue 26: XState 5.33.3 accepts it (differential scenario final_with_children)."""
    from agent_explorer.engine import initial_transition, transition

    machine = setup().create_machine(
        {"id": "m", "initial": "a", "states": {
            "a": {"on": {"GO": "f"}},
            "f": {"type": "final", "initial": "x", "states": {"x": {}, "y": {}}},
        }}
    )
    snapshot, _ = transition(machine, initial_transition(machine)[0], {"type": "GO"})
    assert snapshot.status == "done" and snapshot.value == "f"
    assert [n.id for n in snapshot._config.nodes] == ["m.f", "m"]


@pytest.mark.parametrize("states", [{"x": {}}, None], ids=["not-a-child", "no-children"])
def test_final_state_initial_must_name_a_child(states: dict[str, Any] | None) -> None:
    """XState throws when such a final state is entered; the engine says so up front."""
    final: dict[str, Any] = {"type": "final", "initial": "zzz"}
    if states is not None:
        final["states"] = states
    err = _error({"id": "m", "initial": "a", "states": {"a": {"on": {"GO": "f"}}, "f": final}})
    assert err.path == "#m.f" and 'Initial state node "zzz" not found' in err.message
    assert ("x" in err.message) if states else ('remove "initial"' in err.message)
