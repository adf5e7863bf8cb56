"""State ids and target resolution as XState's (issue 22): `#id.child` is an id then a path,
colliding ids are allowed and the later node takes the id, and everything that names nodes by id
(provide/adopt, exact checkpoints, restored history) still finds the node that was meant.

The XState side of these rules is held in tests/engine/differential (scenarios id_*); these tests
cover what the differential suite cannot see: the engine's own lookups and persistence forms.
"""

from __future__ import annotations

from typing import Any

import pytest

from agent_explorer.engine import initial_transition, setup, transition
from agent_explorer.engine.nodes import to_state_path
from agent_explorer.errors import AgentError, MachineConfigError

ISSUE_MACHINE: dict[str, Any] = {
    "id": "m",
    "initial": "start",
    "states": {
        "start": {"on": {"GO": "#foo.bar"}},
        "x": {"id": "foo.bar"},
        "foo": {"id": "foo", "initial": "a", "states": {"a": {}, "bar": {}}},
    },
}

# Two regions with the explicit id "dup": `first` is shadowed by `second` in the id map.
DUPLICATES: dict[str, Any] = {
    "id": "m",
    "initial": "idle",
    "states": {
        "idle": {"on": {"GO": "p.first.b", "DUP": "#dup.d"}},
        "p": {
            "type": "parallel",
            "on": {"OUT": "idle"},
            "states": {
                "first": {"id": "dup", "initial": "a", "states": {"a": {}, "b": {"on": {"NEXT": "a"}}}},
                "second": {"id": "dup", "initial": "c", "states": {"c": {}, "d": {}}},
            },
        },
    },
}


def test_hash_target_is_an_id_then_a_child_path() -> None:
    machine = setup().create_machine(ISSUE_MACHINE)
    foo_bar = machine.root.states["foo"].states["bar"]
    assert machine.get_state_node_by_id("#foo.bar") is foo_bar
    assert machine.get_state_node_by_id("foo.bar") is foo_bar  # the leading "#" is optional
    assert machine.get_state_node_by_id("#foo\\.bar") is machine.root.states["x"]
    snapshot, _ = initial_transition(machine)
    assert transition(machine, snapshot, {"type": "GO"})[0].value == {"foo": "bar"}


def test_missing_id_before_the_dot_is_a_config_error() -> None:
    config = {**ISSUE_MACHINE, "states": {k: v for k, v in ISSUE_MACHINE["states"].items() if k != "foo"}}
    with pytest.raises(MachineConfigError) as info:
        setup().create_machine(config)
    assert info.value.code == "invalid-machine-config"
    assert info.value.path == "#m.start"
    assert "Child state node '#foo' does not exist" in info.value.message


def test_unknown_child_after_an_id_names_the_node() -> None:
    machine = setup().create_machine(ISSUE_MACHINE)
    with pytest.raises(MachineConfigError, match="Child state 'zzz' does not exist on 'foo'"):
        machine.get_state_node_by_id("#foo.zzz")


def test_to_state_path_matches_xstates_escapes() -> None:
    assert to_state_path("a.b") == ["a", "b"]
    assert to_state_path("a\\.b") == ["a.b"]
    assert to_state_path("some\\\\.thing") == ["some\\", "thing"]
    assert to_state_path("b\\") == ["bundefined"]  # JavaScript's undefined, as text
    assert to_state_path("") == [""]


def test_colliding_default_ids_keep_xstates_map_and_orders() -> None:
    """A key "foo.bar" and the path foo > bar share the default id "(machine).foo.bar"."""
    machine = setup().create_machine(
        {"initial": "start", "states": {"start": {}, "foo.bar": {}, "foo": {"initial": "bar", "states": {"bar": {}}}}}
    )
    keyed, nested = machine.root.states["foo.bar"], machine.root.states["foo"].states["bar"]
    assert keyed.id == nested.id == "(machine).foo.bar"
    assert machine.id_map["(machine).foo.bar"] is nested
    assert list(machine.id_map) == ["(machine)", "(machine).start", "(machine).foo.bar", "(machine).foo"]
    assert machine.all_nodes == [machine.root, machine.root.states["start"], keyed, machine.root.states["foo"], nested]
    # order = size of the id map before the node registers (XState's StateNode constructor)
    assert [n.order for n in machine.all_nodes] == [0, 1, 2, 3, 4]
    dup = setup().create_machine(DUPLICATES)
    p = dup.root.states["p"]
    first, second = p.states["first"], p.states["second"]
    assert [first.order, first.states["b"].order, second.order, second.states["c"].order] == [3, 5, 6, 6]


def _fold(machine: Any, events: list[str]) -> Any:
    snapshot, _ = initial_transition(machine)
    for event in events:
        snapshot, _ = transition(machine, snapshot, {"type": event})
    return snapshot


def test_a_shadowed_state_keeps_working_after_provide() -> None:
    """adopt() maps a snapshot onto the provided machine by id; a shadowed id must not send
    `first` to `second` (the node that owns the id)."""
    machine = setup().create_machine(DUPLICATES)
    snapshot = _fold(machine, ["GO"])
    assert snapshot.value == {"p": {"first": "b", "second": "c"}}
    provided = machine.provide(actions={})
    after, _ = transition(provided, snapshot, {"type": "NEXT"})
    assert after.value == {"p": {"first": "a", "second": "c"}}
    adopted = provided.adopt(snapshot)
    assert [n.path for n in adopted._config.nodes] == [n.path for n in snapshot._config.nodes]
    assert all(n.machine is provided for n in adopted._config.nodes)


def test_exact_checkpoint_of_a_shadowed_state_restores_the_same_nodes() -> None:
    machine = setup().create_machine(DUPLICATES)
    snapshot = _fold(machine, ["GO"])
    exact = machine.get_persisted_snapshot(snapshot, exact=True)
    assert ["p", "first"] in exact["_nodes"]  # named by path: its id belongs to `second`
    restored = machine.restore_snapshot(exact)
    assert restored._config.nodes == snapshot._config.nodes
    assert transition(machine, restored, {"type": "NEXT"})[0].value == {"p": {"first": "a", "second": "c"}}


def test_exact_checkpoint_with_an_unknown_path_is_an_invalid_snapshot() -> None:
    machine = setup().create_machine(DUPLICATES)
    exact = machine.get_persisted_snapshot(_fold(machine, ["GO"]), exact=True)
    exact["_nodes"] = [["p", "nowhere"]]
    with pytest.raises(AgentError) as info:
        machine.restore_snapshot(exact)
    assert info.value.code == "invalid-snapshot"


def test_restored_history_reads_ids_as_xstate_does() -> None:
    """XState's restoreSnapshot resolves each history record through getStateNodeById, which
    splits the id on its dots: a record of the state with id "deep.b" is dropped (no id "deep")."""
    machine = setup().create_machine(
        {
            "id": "h",
            "initial": "p",
            "states": {
                "p": {
                    "initial": "a",
                    "states": {"a": {"on": {"NEXT": "b"}}, "b": {"id": "deep.b"}, "hist": {"type": "history"}},
                    "on": {"OUT": "q"},
                },
                "q": {"on": {"BACK": "p.hist"}},
            },
        }
    )
    live = _fold(machine, ["NEXT", "OUT"])
    persisted = machine.get_persisted_snapshot(live)
    assert persisted["historyValue"] == {"h.p.hist": [{"id": "deep.b"}]}
    assert transition(machine, live, {"type": "BACK"})[0].value == {"p": "b"}
    restored = machine.restore_snapshot(persisted)
    assert transition(machine, restored, {"type": "BACK"})[0].value == {"p": "a"}


def test_states_sharing_an_order_enter_in_xstates_insertion_order() -> None:
    """After a collision two states share an `order` (here `second` and its child `c`); XState's
    stable sort then keeps its entry set's insertion order: the region before its child, on
    every build (an unordered set would depend on object addresses)."""
    from agent_explorer.engine import assign

    def push(tag: str) -> Any:
        return assign({"trail": lambda c, e, p: [*c["trail"], tag]})

    config: dict[str, Any] = {**DUPLICATES, "context": {"trail": []}}
    p = config["states"]["p"]
    second = {**p["states"]["second"], "entry": push("second")}
    second["states"] = {**second["states"], "c": {"entry": push("c")}}
    config["states"] = {**config["states"], "p": {**p, "states": {**p["states"], "second": second}}}
    trails = set()
    for _ in range(40):  # fresh nodes at fresh addresses each time
        machine = setup().create_machine(config)
        trails.add(tuple(_fold(machine, ["DUP", "OUT", "GO"]).context["trail"]))
    assert trails == {("second", "second", "c")}
