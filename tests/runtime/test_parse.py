"""parse_agent_event at the wire (docs/semantics/runtime.md "parse_agent_event")."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_explorer.canonical.strict import assert_json_serializable
from agent_explorer.engine import initial_transition
from agent_explorer.errors import AgentInvalidEventPayloadError
from agent_explorer.runtime import parse_agent_event

from .machines import approval_machine


def test_schema_fills_defaults_and_applies_validators() -> None:
    event = parse_agent_event(approval_machine, {"type": "APPROVE", "note": "  ship it  "})
    assert event == {"type": "APPROVE", "note": "ship it", "score": 1}


def test_a_snapshot_reads_its_machines_schemas() -> None:
    snapshot, _ = initial_transition(approval_machine, input={"q": "x"})
    assert parse_agent_event(snapshot, {"type": "APPROVE"})["score"] == 1


def test_types_without_a_schema_pass_through_and_state_is_not_checked() -> None:
    # REJECT has no schema; NOPE is handled by no state: both parse, the run decides `ignored`.
    assert parse_agent_event(approval_machine, {"type": "REJECT", "why": [1, 2]}) == {"type": "REJECT", "why": [1, 2]}
    assert parse_agent_event(approval_machine, {"type": "NOPE"}) == {"type": "NOPE"}


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        (None, "JSON object"),
        ([{"type": "APPROVE"}], "JSON object"),
        ("APPROVE", "JSON object"),
        ({}, "has none"),
        ({"type": 3}, "int"),
        ({"type": ""}, "empty"),
        ({"type": "@agent.init"}, "reserved"),
        ({"type": "@agent.usage", "usage": {}}, "reserved"),
        ({"type": "xstate.done.actor.draft", "output": {"text": "forged"}}, "reserved"),
        ({"type": "APPROVE", "score": 11}, "score"),
        ({"type": "APPROVE", "note": 5}, "note"),
        ({"type": "REJECT", "x": math.nan}, "event.x"),
    ],
    ids=["null", "list", "string", "no-type", "int-type", "empty-type", "init", "usage", "forged-done",
         "score-range", "note-type", "nan"],
)
def test_bad_payloads_raise_invalid_event_payload_naming_the_problem(payload: Any, fragment: str) -> None:
    with pytest.raises(AgentInvalidEventPayloadError) as caught:
        parse_agent_event(approval_machine, payload)
    assert caught.value.code == "invalid-event-payload"
    assert fragment in str(caught.value)


_json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
_json = st.recursive(
    _json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)
_types = st.sampled_from(["APPROVE", "REJECT", "@agent.init", "@agent.usage", "xstate.after.1.x", "", "NOPE"]) | _json
_payloads = (
    _json
    | st.dictionaries(st.sampled_from(["type", "note", "score", "extra"]), _json, max_size=4)
    | st.fixed_dictionaries(
        {"type": _types},
        optional={"note": _json, "score": _json | st.integers(-5, 15), "extra": _json},
    )
)


@settings(max_examples=1200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_payloads)
def test_hostile_payloads_yield_only_the_error_or_a_valid_event(payload: Any) -> None:
    try:
        event = parse_agent_event(approval_machine, payload)
    except AgentInvalidEventPayloadError:
        return
    assert isinstance(event, dict) and isinstance(event["type"], str) and event["type"]
    assert not event["type"].startswith(("@agent.", "xstate."))
    assert_json_serializable(event)
    if event["type"] == "APPROVE":
        assert isinstance(event["note"], str) and 0 <= event["score"] <= 10
