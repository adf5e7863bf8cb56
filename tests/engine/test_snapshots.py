"""Snapshots are immutable values; persistence round-trips; traces name transitions and states."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from agent_explorer.engine import (
    assign,
    from_promise,
    get_microsteps,
    initial_transition,
    setup,
    transition,
    transition_with_trace,
)


async def _task(input: Any = None) -> Any:
    return None


def _machine() -> Any:
    return setup(actors={"job": from_promise(_task)}).create_machine({
        "id": "m", "initial": "idle", "context": {"items": [], "meta": {"n": 0}},
        "states": {
            "idle": {"on": {"ADD": {"actions": assign({
                "items": lambda c, e, p: c["items"] + [e["item"]],
                "meta": lambda c, e, p: {"n": c["meta"]["n"] + 1},
            })}, "RUN": "running"}},
            "running": {
                "invoke": {"id": "j", "src": "job", "input": {"k": 1}, "onDone": "idle"},
                "type": "parallel",
                "states": {
                    "a": {"initial": "a1", "states": {"a1": {"on": {"NEXT": "a2"}}, "a2": {}, "h": {"type": "history", "history": "deep"}}},
                    "b": {"initial": "b1", "states": {"b1": {}, "b2": {}}},
                },
                "on": {"PAUSE": "paused"},
            },
            "paused": {"on": {"BACK": "running.a.h"}},
        },
    })


def test_transition_never_mutates_its_input() -> None:
    m = _machine()
    s0, _ = initial_transition(m)
    s1, _ = transition(m, s0, {"type": "ADD", "item": "x"})
    before_context = copy.deepcopy(s1.context)
    before_persisted = json.dumps(m.get_persisted_snapshot(s1), sort_keys=True)
    s2, _ = transition(m, s1, {"type": "ADD", "item": "y"})
    s3, _ = transition(m, s2, {"type": "RUN"})
    transition(m, s3, {"type": "PAUSE"})
    assert s1.context == before_context and s1.context is not s2.context
    assert json.dumps(m.get_persisted_snapshot(s1), sort_keys=True) == before_persisted
    assert s0.context == {"items": [], "meta": {"n": 0}}
    assert s2.context["items"] == ["x", "y"]


def test_snapshot_attributes_are_read_only() -> None:
    s, _ = initial_transition(_machine())
    for name in ("value", "context", "status", "output", "error", "children", "tags", "machine"):
        with pytest.raises(AttributeError):
            setattr(s, name, None)


def test_unchanged_parts_are_shared_not_copied() -> None:
    m = _machine()
    s0, _ = initial_transition(m)
    s1, _ = transition(m, s0, {"type": "NOPE"})
    assert s1 is s0  # an unhandled event returns the same snapshot, as XState does


def test_persist_restore_round_trip_mid_run() -> None:
    m = _machine()
    s, _ = initial_transition(m)
    for event in ({"type": "ADD", "item": 1}, {"type": "RUN"}, {"type": "NEXT"}, {"type": "PAUSE"}):
        s, _ = transition(m, s, event)
    persisted = m.get_persisted_snapshot(s)
    assert persisted["historyValue"] == {"m.running.a.h": [{"id": "m.running.a.a2"}]}
    assert persisted["children"] == {}
    wire = json.loads(json.dumps(persisted))
    restored = m.restore_snapshot(wire)
    assert m.get_persisted_snapshot(restored) == wire
    # the restored snapshot continues exactly like the live one
    live, _ = transition(m, s, {"type": "BACK"})
    again, _ = transition(m, restored, {"type": "BACK"})
    assert m.get_persisted_snapshot(again) == m.get_persisted_snapshot(live)
    assert live.value == {"running": {"a": "a2", "b": "b1"}}
    assert set(live.children) == {"j"}


def test_restore_keeps_children_and_status() -> None:
    m = _machine()
    s, _ = initial_transition(m)
    s, _ = transition(m, s, {"type": "RUN"})
    wire = json.loads(json.dumps(m.get_persisted_snapshot(s)))
    assert wire["children"]["j"] == {"snapshot": {"status": "active", "input": {"k": 1}}, "src": "job", "syncSnapshot": False}
    restored = m.restore_snapshot(wire)
    assert restored.children["j"].src == "job"
    done, _ = transition(m, restored, {"type": "xstate.done.actor.j", "output": None})
    assert done.value == "idle" and done.children == {}


def test_transition_with_trace_lists_microsteps() -> None:
    m = _machine()
    s, _ = initial_transition(m)
    s, actions, trace = transition_with_trace(m, s, {"type": "RUN"})
    assert trace == [{
        "event": {"type": "RUN"},
        "transitions": ["#m.idle:on:RUN:0"],
        "exited": ["m.idle"],
        "entered": ["m.running", "m.running.a", "m.running.a.a1", "m.running.b", "m.running.b.b1"],
    }]
    assert [a.type for a in actions] == ["xstate.spawnChild"]
    _, _, init_trace = transition_with_trace(m, None)
    assert init_trace[0]["entered"][0] == "m" and init_trace[0]["event"] == {"type": "xstate.init"}
    steps = get_microsteps(m, s, {"type": "NEXT"})
    assert len(steps) == 1 and steps[0].snapshot is not None and steps[0].snapshot.value == {"running": {"a": "a2", "b": "b1"}}


def test_a_provided_machine_continues_snapshots_of_the_original() -> None:
    calls: list[str] = []
    m = setup(actions={"hello": lambda c, e, p: calls.append("old")}).create_machine(
        {"id": "m", "initial": "a", "states": {"a": {"on": {"GO": "b"}}, "b": {"entry": "hello"}}}
    )
    s, _ = initial_transition(m)
    provided = m.provide(actions={"hello": lambda c, e, p: calls.append("new")})
    s2, actions = transition(provided, s, {"type": "GO"})
    assert s2.machine is provided and s2.value == "b"
    for action in actions:
        action.exec()
    assert calls == ["new"]


def test_a_child_spawned_from_inline_logic_cannot_be_persisted() -> None:
    from agent_explorer.engine import spawn_child
    from agent_explorer.errors import AgentError

    m = setup().create_machine({"id": "m", "initial": "a", "states": {"a": {"entry": spawn_child(from_promise(_task), id="x")}}})
    s, actions = initial_transition(m)
    assert [a.type for a in actions] == ["xstate.spawnChild"] and "x" in s.children
    with pytest.raises(AgentError) as info:
        m.get_persisted_snapshot(s)
    assert info.value.code == "non-persistable-child"


def test_microsteps_match_xstate_get_microsteps() -> None:
    # Pinned in Node (xstate 5.33.3, getMicrosteps / getInitialMicrosteps on the twin machine):
    #   NOPE -> [['a', 0 actions]]; GO -> [['b', ['xstate.raise']], ['c', []], ['d', []]]; init -> [['a', []]]
    from agent_explorer.engine import create_machine, get_initial_microsteps, raise_

    m = create_machine({"id": "m", "initial": "a", "states": {
        "a": {"on": {"GO": "b"}}, "b": {"entry": raise_({"type": "R"}), "on": {"R": "c"}},
        "c": {"always": "d"}, "d": {}}})
    s, _ = initial_transition(m)

    def shape(steps: Any) -> list[Any]:
        return [(step.snapshot.value, [a.type for a in step.actions]) for step in steps]

    assert shape(get_microsteps(m, s, {"type": "NOPE"})) == [("a", [])]
    assert shape(get_microsteps(m, s, {"type": "GO"})) == [("b", ["xstate.raise"]), ("c", []), ("d", [])]
    assert shape(get_initial_microsteps(m)) == [("a", [])]
    _, _, trace = transition_with_trace(m, s, {"type": "GO"})
    assert [step["event"]["type"] for step in trace] == ["GO", "R", "R"]  # always runs with the last event
    assert [step["transitions"] for step in trace] == [["#m.a:on:GO:0"], ["#m.b:on:R:0"], ["#m.c:always:0"]]
