"""Unit tests for each semantic bullet of issue 3 (XState v5's behaviour, written out by hand).

The differential suite (tests/engine/differential) checks the same against XState itself; these
pin the behaviour in plain Python so a failure reads as a sentence.
"""

from __future__ import annotations

from typing import Any

import pytest

from agent_explorer.engine import (
    and_,
    assign,
    cancel,
    create_machine,
    emit,
    enqueue_actions,
    from_promise,
    initial_transition,
    log,
    not_,
    or_,
    raise_,
    send_to,
    setup,
    spawn_child,
    state_in,
    stop_child,
    transition,
)
from agent_explorer.errors import AgentError


async def _task(input: Any = None) -> Any:
    return None


def run(machine: Any, *events: dict[str, Any] | str, input: Any = None) -> tuple[Any, list[Any]]:
    snapshot, actions = initial_transition(machine, input=input)
    for event in events:
        snapshot, actions = transition(machine, snapshot, {"type": event} if isinstance(event, str) else event)
    return snapshot, actions


def types(actions: list[Any]) -> list[str]:
    return [a.type for a in actions]


def recorder() -> tuple[list[str], Any]:
    seen: list[str] = []

    def make(name: str) -> Any:
        return lambda c, e, p: seen.append(name)

    return seen, make


# -- state kinds -------------------------------------------------------------------------------


def test_atomic_and_compound_values() -> None:
    m = create_machine({"id": "m", "initial": "a", "states": {
        "a": {"on": {"GO": "b"}},
        "b": {"initial": "x", "states": {"x": {"on": {"NEXT": "y"}}, "y": {}}},
    }})
    assert run(m)[0].value == "a"
    assert run(m, "GO")[0].value == {"b": "x"}
    assert run(m, "GO", "NEXT")[0].value == {"b": "y"}


def test_parallel_regions_and_final_with_output() -> None:
    m = create_machine({
        "id": "m", "type": "parallel",
        "states": {
            "upload": {"initial": "busy", "states": {"busy": {"on": {"UP": "ok"}}, "ok": {"type": "final"}}},
            "scan": {"initial": "busy", "states": {"busy": {"on": {"SCAN": "ok"}}, "ok": {"type": "final"}}},
        },
        "output": lambda c, e, p: {"event": e},
    })
    s, _ = run(m)
    assert s.value == {"upload": "busy", "scan": "busy"}
    s, _ = run(m, "UP")
    assert s.status == "active" and s.value == {"upload": "ok", "scan": "busy"}
    s, _ = run(m, "UP", "SCAN")
    assert s.status == "done"
    # The machine's output sees the done event of the node that completed it (the root here).
    assert s.output == {"event": {"type": "xstate.done.state.m"}}


def test_top_level_final_state_output_reaches_machine_output() -> None:
    m = create_machine({
        "id": "m", "initial": "a",
        "states": {"a": {"on": {"END": "end"}}, "end": {"type": "final", "output": lambda c, e, p: {"n": 1}}},
        "output": lambda c, e, p: {"got": e["output"]},
    })
    s, _ = run(m, "END")
    assert s.status == "done" and s.output == {"got": {"n": 1}}
    assert m.get_persisted_snapshot(s)["output"] == {"got": {"n": 1}}


def test_compound_final_raises_done_state_event_with_output() -> None:
    m = create_machine({
        "id": "m", "initial": "job", "context": {"result": None},
        "states": {
            "job": {
                "initial": "work",
                "states": {"work": {"on": {"FINISH": "ok"}}, "ok": {"type": "final", "output": {"code": 7}}},
                "onDone": {"target": "after", "actions": assign({"result": lambda c, e, p: e["output"]})},
            },
            "after": {},
        },
    })
    s, _ = run(m, "FINISH")
    assert s.value == "after" and s.context == {"result": {"code": 7}}


def test_shallow_and_deep_history() -> None:
    m = create_machine({
        "id": "m", "initial": "on",
        "states": {
            "on": {
                "initial": "a",
                "states": {
                    "a": {"on": {"NEXT": "b"}},
                    "b": {"initial": "b1", "states": {"b1": {"on": {"DEEPER": "b2"}}, "b2": {}}},
                    "shallow": {"type": "history"},
                    "deep": {"type": "history", "history": "deep"},
                },
                "on": {"OFF": "off"},
            },
            "off": {"on": {"SHALLOW": "on.shallow", "DEEP": "on.deep"}},
        },
    })
    s, _ = run(m, "NEXT", "DEEPER", "OFF")
    assert m.get_persisted_snapshot(s)["historyValue"] == {
        "m.on.shallow": [{"id": "m.on.b"}],
        "m.on.deep": [{"id": "m.on.b.b2"}],
    }
    assert transition(m, s, {"type": "SHALLOW"})[0].value == {"on": {"b": "b1"}}
    assert transition(m, s, {"type": "DEEP"})[0].value == {"on": {"b": "b2"}}


def test_history_default_target_without_history() -> None:
    m = create_machine({
        "id": "m", "initial": "off",
        "states": {
            "off": {"on": {"RESUME": "on.h"}},
            "on": {"initial": "a", "states": {"a": {}, "b": {}, "h": {"type": "history", "target": "b"}}},
        },
    })
    assert run(m, "RESUME")[0].value == {"on": "b"}


# -- targets ---------------------------------------------------------------------------------


def test_child_id_and_multiple_parallel_targets() -> None:
    m = create_machine({
        "id": "m", "initial": "idle",
        "states": {
            "idle": {"on": {"DOT": ".inner", "ID": "#deep", "BOTH": {"target": ["#m.p.left.l2", "#m.p.right.r2"]}},
                     "initial": "start", "states": {"start": {}, "inner": {"id": "deep"}}},
            "p": {"type": "parallel", "states": {
                "left": {"initial": "l1", "states": {"l1": {}, "l2": {}}},
                "right": {"initial": "r1", "states": {"r1": {}, "r2": {}}},
            }},
        },
    })
    assert run(m, "DOT")[0].value == {"idle": "inner"}
    assert run(m, "ID")[0].value == {"idle": "inner"}
    assert run(m, "BOTH")[0].value == {"p": {"left": "l2", "right": "r2"}}


def test_reenter_true_versus_default() -> None:
    seen, rec = recorder()
    m = create_machine({
        "id": "m", "initial": "a",
        "states": {"a": {
            "entry": rec("enter a"), "exit": rec("exit a"),
            "initial": "x", "states": {"x": {"entry": rec("enter x"), "exit": rec("exit x")}, "y": {}},
            "on": {"SOFT": ".x", "HARD": {"target": ".x", "reenter": True}, "SELF": {"target": "a"}},
        }},
    })
    s, _ = initial_transition(m)

    def fire(event: str) -> list[str]:
        seen.clear()
        for a in transition(m, s, {"type": event})[1]:
            a.exec()
        return list(seen)

    assert fire("SOFT") == ["exit x", "enter x"]
    assert fire("HARD") == ["exit x", "exit a", "enter a", "enter x"]
    # v5: targeting yourself without reenter does not leave you; only the descendants restart
    assert fire("SELF") == ["exit x", "enter x"]


def test_targetless_transition_keeps_state_and_runs_actions() -> None:
    m = setup(actions={"never": lambda c, e, p: None}).create_machine(
        {"id": "m", "initial": "a", "context": {"n": 0}, "states": {"a": {
            "entry": "never", "on": {"INC": {"actions": assign({"n": lambda c, e, p: c["n"] + 1})}}}}}
    )
    s, actions = run(m, "INC")
    assert s.context == {"n": 1} and actions == []  # no exit/entry: entry's "never" is not re-run


# -- order of the algorithm -------------------------------------------------------------------


def test_exit_then_transition_then_entry_order() -> None:
    m = setup(actions={k: (lambda c, e, p: None) for k in ("xa", "xp", "t", "eb", "ebb")}).create_machine({
        "id": "m", "initial": "p",
        "states": {
            "p": {"exit": "xp", "initial": "a", "states": {"a": {"exit": "xa", "on": {"GO": {"target": "#m.b", "actions": "t"}}}}},
            "b": {"entry": "eb", "initial": "bb", "states": {"bb": {"entry": "ebb"}}},
        },
    })
    assert types(run(m, "GO")[1]) == ["xa", "xp", "t", "eb", "ebb"]


def test_inner_transition_wins_and_document_order_breaks_ties() -> None:
    m = create_machine({"id": "m", "initial": "a", "on": {"E": ".c"}, "states": {
        "a": {"initial": "a1", "states": {"a1": {"on": {"E": "#m.b"}}}, "on": {"E": "c"}},
        "b": {}, "c": {},
    }})
    assert run(m, "E")[0].value == "b"
    m2 = create_machine({"id": "m", "initial": "a", "states": {
        "a": {"on": {"E": [{"target": "b", "guard": lambda c, e, p: False}, {"target": "c"}, {"target": "b"}]}},
        "b": {}, "c": {},
    }})
    assert run(m2, "E")[0].value == "c"


def test_parallel_conflict_keeps_the_first_region() -> None:
    m = create_machine({"id": "m", "initial": "p", "states": {
        "p": {"type": "parallel", "states": {
            "r1": {"initial": "a", "states": {"a": {"on": {"E": "#m.x"}}}},
            "r2": {"initial": "b", "states": {"b": {"on": {"E": "#m.y"}}}},
        }},
        "x": {}, "y": {},
    }})
    assert run(m, "E")[0].value == "x"


def test_always_chain_to_fixed_point_and_raise_queue() -> None:
    seen, rec = recorder()
    m = create_machine({
        "id": "m", "initial": "a", "context": {"n": 0},
        "states": {
            "a": {"on": {"GO": "b"}},
            "b": {"entry": raise_({"type": "PING"}), "always": {"target": "c", "guard": lambda c, e, p: c["n"] == 0},
                  "on": {"PING": {"actions": rec("ping in b")}}},
            "c": {"always": {"target": "d", "actions": assign({"n": lambda c, e, p: c["n"] + 1})},
                  "on": {"PING": {"actions": rec("ping in c")}}},
            "d": {"on": {"PING": {"actions": rec("ping in d")}}},
        },
    })
    s, actions = run(m, "GO")
    # eventless transitions are taken before the raised event is processed
    assert s.value == "d" and s.context == {"n": 1}
    assert types(actions) == ["xstate.raise", "(anonymous)"]
    for a in actions:
        a.exec()
    assert seen == ["ping in d"]


def test_done_state_event_for_parallel_regions() -> None:
    m = create_machine({"id": "m", "initial": "p", "states": {
        "p": {"type": "parallel", "onDone": "finished", "states": {
            "r1": {"initial": "a", "states": {"a": {"on": {"A": "f"}}, "f": {"type": "final"}}},
            "r2": {"initial": "b", "states": {"b": {"on": {"B": "f"}}, "f": {"type": "final"}}},
        }},
        "finished": {},
    }})
    assert run(m, "A")[0].value == {"p": {"r1": "f", "r2": "b"}}
    assert run(m, "A", "B")[0].value == "finished"


# -- guards -----------------------------------------------------------------------------------


def test_guards_by_name_with_params_combinators_and_state_in() -> None:
    m = setup(guards={
        "atLeast": lambda c, e, p: c["n"] >= p["min"],
        "isEven": lambda c, e, p: c["n"] % 2 == 0,
    }).create_machine({
        "id": "m", "type": "parallel", "context": {"n": 4},
        "states": {
            "mode": {"initial": "on", "states": {"on": {}, "off": {}}},
            "main": {"initial": "idle", "states": {
                "idle": {"on": {"GO": [
                    {"target": "never", "guard": and_([{"type": "atLeast", "params": {"min": 5}}, "isEven"])},
                    {"target": "either", "guard": or_([not_("isEven"), state_in("#m.mode.on")])},
                ]}},
                "never": {}, "either": {},
            }},
        },
    })
    s, _ = run(m, "GO")
    assert s.value == {"mode": "on", "main": "either"}
    assert s.matches({"main": "either"}) and not s.matches("main.idle")


def test_guard_receives_params_none_without_params() -> None:
    got: list[Any] = []
    m = setup(guards={"g": lambda c, e, p: got.append(p) or True}).create_machine(
        {"id": "m", "initial": "a", "states": {"a": {"on": {"E": {"guard": "g", "target": "b"}}}, "b": {}}}
    )
    run(m, "E")
    assert got == [None]


# -- actions ----------------------------------------------------------------------------------


def test_assign_per_key_and_whole_and_custom_params() -> None:
    m = setup(actions={"notify": lambda c, e, p: None}).create_machine({
        "id": "m", "initial": "a", "context": {"a": 1, "b": 2},
        "states": {"a": {"on": {"E": {"actions": [
            assign({"a": lambda c, e, p: c["a"] + e["by"], "c": 3}),
            assign(lambda c, e, p: {"b": c["a"] * 10}),
            {"type": "notify", "params": {"level": "info"}},
        ]}}}},
    })
    s, actions = run(m, {"type": "E", "by": 5})
    assert s.context == {"a": 6, "b": 60, "c": 3}
    assert [(a.type, a.params) for a in actions] == [("notify", {"level": "info"})]
    assert actions[0].info["context"] == {"a": 6, "b": 60, "c": 3}


def test_builtin_action_kinds_and_params() -> None:
    m = setup(actors={"worker": from_promise(_task)}, delays={"soon": 250}).create_machine({
        "id": "m", "initial": "a",
        "states": {"a": {"on": {"E": {"actions": [
            raise_({"type": "LATER"}, delay="soon", id="t1"),
            cancel("t1"),
            spawn_child("worker", id="w", input=lambda c, e, p: {"from": e["type"]}),
            send_to("w", {"type": "PING"}),
            emit({"type": "NOTICE"}),
            log("hello", label="L"),
            stop_child("w"),
        ]}}}},
    })
    s, actions = run(m, "E")
    assert [(a.type, a.params) for a in actions] == [
        ("xstate.raise", {"event": {"type": "LATER"}, "id": "t1", "delay": 250}),
        ("xstate.cancel", {"sendId": "t1"}),
        ("xstate.spawnChild", {"id": "w", "src": "worker", "input": {"from": "E"}}),
        ("xstate.sendTo", {"to": "w", "targetId": "w", "event": {"type": "PING"}}),
        ("xstate.emit", {"event": {"type": "NOTICE"}}),
        ("xstate.log", {"value": "hello", "label": "L"}),
        ("xstate.stopChild", {"id": "w"}),
    ]
    assert s.children == {}
    assert all(a.exec() is None for a in actions)  # built-ins execute nothing under the pure API


def test_send_to_a_missing_child_raises_like_xstate() -> None:
    m = create_machine({"id": "m", "initial": "a", "states": {"a": {"on": {"E": {"actions": send_to("ghost", {"type": "X"})}}}}})
    s, _ = initial_transition(m)
    with pytest.raises(AgentError, match="Unable to send event to actor 'ghost'") as info:
        transition(m, s, {"type": "E"})
    assert info.value.code == "unknown-actor"


def test_enqueue_actions_chooses_at_run_time() -> None:
    m = setup(guards={"big": lambda c, e, p: e["n"] > 10}, actions={"custom": lambda c, e, p: None}).create_machine({
        "id": "m", "initial": "a", "context": {"last": None},
        "states": {"a": {"on": {"E": {"actions": enqueue_actions(lambda q, params: (
            q.enqueue.assign({"last": q.event["n"]}),
            q.enqueue("custom") if q.check("big") else q.enqueue.raise_({"type": "SMALL"}),
        ))}}}},
    })
    s, actions = run(m, {"type": "E", "n": 50})
    assert s.context == {"last": 50} and types(actions) == ["custom"]
    s, actions = run(m, {"type": "E", "n": 1})
    assert types(actions) == ["xstate.raise"]


def test_custom_action_exec_calls_the_implementation_with_its_context() -> None:
    calls: list[tuple[Any, ...]] = []
    m = setup(actions={"save": lambda c, e, p: calls.append((c, e["type"], p))}).create_machine({
        "id": "m", "initial": "a", "context": {"k": 1},
        "states": {"a": {"on": {"E": {"actions": {"type": "save", "params": {"to": "disk"}}}}}},
    })
    _, actions = run(m, "E")
    assert calls == []  # pure: nothing executed by transition
    actions[0].exec()
    assert calls == [({"k": 1}, "E", {"to": "disk"})]


# -- after timers -----------------------------------------------------------------------------


def test_after_timers_are_delayed_raises_and_cancels() -> None:
    m = setup(delays={"retry": lambda c, e, p: c["wait"]}).create_machine({
        "id": "m", "initial": "a", "context": {"wait": 40},
        "states": {"a": {"after": {"retry": "c", 2000: "b", 1000: "c"}}, "b": {}, "c": {}},
    })
    s, actions = initial_transition(m)
    # integer-like keys come first in ascending order, as JavaScript objects list them
    assert [(a.type, a.params) for a in actions] == [
        ("xstate.raise", {"event": {"type": "xstate.after.1000.m.a"}, "id": "xstate.after.1000.m.a", "delay": 1000}),
        ("xstate.raise", {"event": {"type": "xstate.after.2000.m.a"}, "id": "xstate.after.2000.m.a", "delay": 2000}),
        ("xstate.raise", {"event": {"type": "xstate.after.retry.m.a"}, "id": "xstate.after.retry.m.a", "delay": 40}),
    ]
    s2, actions = transition(m, s, {"type": "xstate.after.2000.m.a"})
    assert s2.value == "b"
    assert [a.params["sendId"] for a in actions] == [
        "xstate.after.1000.m.a", "xstate.after.2000.m.a", "xstate.after.retry.m.a"]
    # a timer of a state already left is ignored
    s3, actions = transition(m, s2, {"type": "xstate.after.1000.m.a"})
    assert s3.value == "b" and actions == []


# -- invoke and children ----------------------------------------------------------------------


def _invoker() -> Any:
    return setup(actors={"fetch": from_promise(_task)}).create_machine({
        "id": "m", "initial": "loading", "context": {"q": "cats"},
        "states": {
            "loading": {"invoke": {"id": "f", "src": "fetch", "input": lambda c, e, p: {"q": c["q"]},
                                   "onDone": {"target": "ok", "actions": assign({"q": lambda c, e, p: e["output"]})},
                                   "onError": "failed"},
                        "on": {"ABORT": "idle"}},
            "ok": {}, "failed": {}, "idle": {},
        },
    })


def test_invoke_records_child_and_completions_arrive_as_events() -> None:
    m = _invoker()
    s, actions = initial_transition(m)
    assert [(a.type, a.params) for a in actions] == [("xstate.spawnChild", {"id": "f", "src": "fetch", "input": {"q": "cats"}})]
    assert m.get_persisted_snapshot(s)["children"] == {
        "f": {"snapshot": {"status": "active", "input": {"q": "cats"}}, "src": "fetch", "syncSnapshot": False}
    }
    done, actions = transition(m, s, {"type": "xstate.done.actor.f", "output": "dogs", "actorId": "f"})
    assert done.value == "ok" and done.context == {"q": "dogs"} and done.children == {}
    assert types(actions) == ["xstate.stopChild"]
    failed, _ = transition(m, s, {"type": "xstate.error.actor.f", "error": {"message": "x"}})
    assert failed.value == "failed" and failed.status == "active"


def test_stale_completion_and_unhandled_error() -> None:
    m = _invoker()
    s, _ = initial_transition(m)
    left, _ = transition(m, s, {"type": "ABORT"})
    stale, actions = transition(m, left, {"type": "xstate.done.actor.f", "output": 1})
    assert stale.value == "idle" and actions == [] and stale.context == left.context
    # an error event nobody handles puts the machine in status "error" with the event's error
    broken, actions = transition(m, left, {"type": "xstate.error.actor.other", "error": {"why": "boom"}})
    assert broken.status == "error" and broken.error == {"why": "boom"}
    assert m.get_persisted_snapshot(broken)["error"] == {"why": "boom"}


def test_events_after_done_still_run_root_handlers() -> None:
    m = create_machine({"id": "m", "initial": "a", "context": {"n": 0},
                        "on": {"COUNT": {"actions": assign({"n": lambda c, e, p: c["n"] + 1})}},
                        "states": {"a": {"on": {"END": "z"}}, "z": {"type": "final"}}})
    s, _ = run(m, "END", "COUNT")
    assert s.status == "done" and s.context == {"n": 1}


def test_exception_in_initial_gives_error_status_and_in_transition_propagates() -> None:
    def boom(c: Any, e: Any, p: Any) -> Any:
        raise ValueError("bad entry")

    m = create_machine({"id": "m", "initial": "a", "states": {"a": {"entry": assign(boom)}}})
    s, _ = initial_transition(m)
    assert s.status == "error" and isinstance(s.error, ValueError)
    assert m.get_persisted_snapshot(s)["error"] == {}  # JSON.stringify(new Error()) is {}
    m2 = create_machine({"id": "m", "initial": "a", "states": {"a": {"on": {"E": {"actions": assign(boom)}}}}})
    s2, _ = initial_transition(m2)
    with pytest.raises(ValueError, match="bad entry"):
        transition(m2, s2, {"type": "E"})


# -- wildcards, input, tags, can, matches --------------------------------------------------


def test_wildcards_exact_first_then_longest_prefix() -> None:
    m = create_machine({"id": "m", "initial": "a", "states": {
        "a": {"on": {"*": "star", "user.*": "user", "user.login.*": "login", "user.login": "exact"}},
        "star": {}, "user": {}, "login": {}, "exact": {},
    }})
    assert run(m, "user.login")[0].value == "exact"
    assert run(m, "user.login.ok")[0].value == "login"
    assert run(m, "user.logout")[0].value == "user"
    assert run(m, "userx")[0].value == "star"


def test_context_from_input_tags_can_matches() -> None:
    m = create_machine({
        "id": "m", "initial": "a",
        "context": lambda input: {"start": (input or {}).get("start", 0)},
        "states": {"a": {"tags": ["idle", "ready"], "on": {"GO": {"target": "b", "guard": lambda c, e, p: c["start"] > 0}}},
                   "b": {"tags": ["busy"]}},
    })
    s, _ = initial_transition(m, input={"start": 3})
    assert s.context == {"start": 3}
    assert s.has_tag("ready") and not s.has_tag("busy") and s.tags == frozenset({"idle", "ready"})
    assert s.can({"type": "GO"}) and not s.can({"type": "NOPE"})
    s0, _ = initial_transition(m)
    assert not s0.can({"type": "GO"})  # guard evaluated
    assert s.matches("a") and not s.matches("b")


def test_engine_errors_carry_stable_codes() -> None:
    m = create_machine({"id": "m", "initial": "a", "states": {"a": {"on": {"PING": {"actions": raise_({"type": "PING"})}}}}})
    s, _ = initial_transition(m)
    for bad in ({"type": "*"}, {"kind": "x"}, "PING"):
        with pytest.raises(AgentError) as info:
            transition(m, s, bad)  # type: ignore[arg-type]
        assert info.value.code == "invalid-event"
    looping = create_machine({"id": "m", "initial": "a", "options": {"maxIterations": 50},
                              "states": {"a": {"on": {"PING": {"actions": raise_({"type": "PING"})}}}}})
    s, _ = initial_transition(looping)
    with pytest.raises(AgentError) as info:
        transition(looping, s, {"type": "PING"})
    assert info.value.code == "infinite-loop" and "'m'" in info.value.message
    with pytest.raises(AgentError) as info:
        m.restore_snapshot({"status": "active", "value": "zzz", "context": {}, "children": {}, "historyValue": {}})
    assert info.value.code == "invalid-snapshot"


def test_done_machine_reruns_exits_when_an_event_is_handled() -> None:
    # XState's pure API: a microstep on a done snapshot ends by running every exit action again.
    m = setup(actions={k: (lambda c, e, p: None) for k in ("rootExit", "zExit", "pinged")}).create_machine({
        "id": "m", "initial": "a", "exit": "rootExit", "on": {"PING": {"actions": "pinged"}},
        "states": {"a": {"on": {"END": "z"}}, "z": {"type": "final", "exit": "zExit"}},
    })
    s, actions = run(m, "END")
    assert s.status == "done" and types(actions) == ["zExit", "rootExit"]
    s2, actions = transition(m, s, {"type": "PING"})
    assert types(actions) == ["pinged", "zExit", "rootExit"]
    assert transition(m, s2, {"type": "NOPE"})[1] == []


def test_route_reaches_a_state_by_id_from_anywhere() -> None:
    m = create_machine({"id": "m", "initial": "a", "states": {
        "a": {}, "b": {"initial": "c", "states": {"c": {"id": "cee", "route": {}}}}}})
    s, _ = initial_transition(m)
    assert transition(m, s, {"type": "xstate.route", "to": "#cee"})[0].value == {"b": "c"}
    assert transition(m, s, {"type": "xstate.route", "to": "#other"})[0].value == "a"
