"""XState's own id tests (packages/core/test/id.test.ts), ported: what each test expects, held
against both XState's record of the twin scenario and the engine's fold of it.

test_differential.py already requires the engine to equal XState step by step on these
scenarios (tests/node/xstate/scenarios/id_*.mjs); this file pins that the twins still say what
id.test.ts says (so a twin edited into something else cannot pass silently), plus issue 22's two
machines. Every test of id.test.ts is expressible through the pure API, so all five are here.
"""

from __future__ import annotations

from typing import Any

import pytest

from agent_explorer.engine import initial_transition, transition

from .harness import Record, load_twin, oracle_for

# scenario -> the value after each event (index 0: the initial snapshot), as id.test.ts expects.
EXPECTED: dict[str, list[Any]] = {
    # testAll(idMachine, ...): from A / {A:foo} / {A:bar} / {B:foo} on NEXT, NEXT_DOT_RESOLVE,
    # "NEXT,NEXT" and NEXT_DOT, walked in one fold.
    "id_xstate_test_all": [
        {"A": "foo"},
        {"A": "bar"},
        {"B": "foo"},
        {"B": "bar"},
        {"A": "foo"},
        {"B": "bar"},
        {"A": "foo"},
        {"A": "bar"},
        {"B": "foo"},
        {"B": "dot"},
    ],
    # "should work with ID + relative path"
    "id_relative_path": ["foo", {"bar": {"qux": "quux"}}],
    # "should work with keys that have escaped periods" (also issue 22's second machine)
    "id_escaped_key_periods": ["start", "foo.bar", "foo.bar"],
    "id_escaped_key_periods_unescaped": ["start", {"foo": "bar"}, {"foo": "bar"}],
    # "should work with IDs that have escaped periods"
    "id_escaped_id_periods": ["start", "stateWithDot", "stateWithDot"],
    "id_escaped_id_periods_unescaped": ["start", {"foo": "bar"}, {"foo": "bar"}],
    # "should not treat escaped backslash as period's escape"
    "id_escaped_backslash": ["start", {"bar": "thing"}],
    # issue 22's first machine: '#foo.bar' is id foo, then bar; '#foo\\.bar' is the id "foo.bar"
    "id_issue22_id_then_path": ["start", {"foo": "bar"}, "start", "x", "start", {"foo": "bar"}],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_xstate_id_test_expectations(name: str, xstate_oracle: Record) -> None:
    expected = EXPECTED[name]
    oracle = oracle_for(xstate_oracle, name)
    assert [step.get("value") for step in oracle["steps"]] == expected, "XState's record"
    machine = load_twin(name).build()
    snapshot, _ = initial_transition(machine)
    values = [snapshot.value]
    for event in oracle["events"]:
        snapshot, _ = transition(machine, snapshot, event)
        values.append(snapshot.value)
    assert values == expected, "the engine's fold"


def test_missing_id_before_the_dot_is_rejected_by_both(xstate_oracle: Record) -> None:
    """Issue 22: with no id "foo", '#foo.bar' is an error in XState (at createMachine), even
    though a state has the id "foo.bar"; invalid_configs.json holds the machine, and the
    engine's rejection of it is checked by test_invalid_config_rejected_no_later_than_xstate."""
    rejected = xstate_oracle["invalid"]["id_with_dot_but_no_id_before_it"]
    assert rejected == {
        "stage": "createMachine",
        "message": "Child state node '#foo' does not exist on machine 'm'",
    }
