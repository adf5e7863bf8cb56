"""check_state_hash (the verifying fold's hash) against the plain `state_hash`: same digest, same errors,
on the hard JCS values, random snapshots under random copy-on-write and in-place edits, and a machine
that edits its context in place."""

from __future__ import annotations

import copy
import enum
import hashlib
import math
import re
import uuid
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_explorer.canonical.jcs import state_hash
from agent_explorer.canonical.verify_hash import check_state_hash, is_jcs_text
from agent_explorer.engine import assign, initial_transition, setup, transition
from agent_explorer.errors import NonSerializableAgentEventError
from agent_explorer.eventlog.entries import create_replay_entry, init_entry
from agent_explorer.eventlog.fold import fold
from agent_explorer.eventlog.replay import replay
from agent_explorer.eventlog.verification import verify_log

from .test_hashing import hard_values, json_values

WRONG = "0" * 64  # a recorded hash no value has


class Color(enum.IntEnum):
    RED = 1


class Name(str):
    pass


def outcome(function: Any, value: object) -> tuple[str, str]:
    """("hash", digest) or ("error", path): what hashing `value` gives."""
    try:
        return "hash", function(value)
    except NonSerializableAgentEventError as error:
        return "error", error.path


def test_equals_state_hash_on_the_hard_jcs_values_whatever_the_record() -> None:
    for value in hard_values():
        for wrapped in (value, {"context": {"v": value}}):
            digest = state_hash(wrapped)
            for expected in (digest, WRONG, None):
                assert check_state_hash(wrapped, expected) == digest, repr(wrapped)[:200]


@pytest.mark.parametrize(
    "bad", [{1: 2}, "\ud800", 2**53 + 1, Name("x"), {3, 4}, b"x", 1.5 + 2j], ids=repr,
)
def test_refuses_what_orjson_refuses_with_state_hashs_path(bad: object) -> None:
    value = {"context": {"items": [{"ok": 1}, {"x": bad}]}, "status": "active"}
    for expected in (WRONG, None):
        with pytest.raises(NonSerializableAgentEventError) as caught:
            check_state_hash(value, expected)
        assert caught.value.path == outcome(state_hash, value)[1]
        assert caught.value.path.startswith("context.items[1].x")


@pytest.mark.parametrize(
    ("bad", "rendered"),
    [(math.nan, None), (-math.inf, None), ((1, 2), [1, 2]), (Color.RED, 1), (uuid.UUID(int=7), str(uuid.UUID(int=7))),
     (orjson.Fragment(b"[1]"), [1])],
    ids=repr,
)
def test_a_coerced_value_is_refused_unless_it_renders_exactly_as_recorded(bad: object, rendered: object) -> None:
    value = {"context": {"items": [{"ok": 1}, {"x": bad}]}, "status": "active"}
    as_recorded = state_hash({"context": {"items": [{"ok": 1}, {"x": rendered}]}, "status": "active"})
    # The live value renders byte for byte as the recorded canonical text: the log verifies (as XState's would).
    assert check_state_hash(value, as_recorded) == as_recorded
    # Any other record: the exact path decides, and refuses it as state_hash does.
    for expected in (WRONG, None):
        with pytest.raises(NonSerializableAgentEventError) as caught:
            check_state_hash(value, expected)
        assert caught.value.path == outcome(state_hash, value)[1]


@pytest.mark.parametrize(
    "value",
    [{"n": 2.0}, {"n": -0.0}, {"n": 1e-6}, {"n": 1e16}, {"n": [0.5, 3.0]},
     {"k": {"\U0001f600": 1, "\ue000": 2}}, {"k": "a 😀 value", "\ue000": 1, "\U00010000": 2}],
    ids=repr,
)
def test_never_certifies_orjsons_text_where_it_is_not_jcs(value: dict[str, Any]) -> None:
    # A record made from orjson's own text (a recorder that skipped JCS) must not verify: the text
    # checks send these values down the exact path, which hashes the JCS text instead.
    orjson_digest = hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()
    assert orjson_digest != state_hash(value)
    assert check_state_hash(value, orjson_digest) == state_hash(value)


def test_a_value_edited_in_place_between_steps_is_hashed_as_it_is_now() -> None:
    # The engine shares unchanged context values between snapshots; an impure action may edit one in place.
    history: list[Any] = [{"kind": "start", "n": 1}]
    step1 = {"status": "active", "context": {"turns": 1, "history": history}}
    first = check_state_hash(step1, state_hash(step1))
    step2 = {"status": "active", "context": {"turns": 2, "history": history}}  # shares `history`
    history.append({"kind": "thought"})
    history[0]["n"] = True  # 1 -> True: equal in Python, "true" in JSON
    assert check_state_hash(step2, first) == state_hash(step2) != first
    history[0]["n"] = 2.0  # an integral float: JCS writes "2", orjson "2.0"
    assert check_state_hash(step2, state_hash(step2)) == state_hash(step2)
    history[0]["\U0001f600"] = "astral key: UTF-16 order"
    assert check_state_hash(step2, WRONG) == state_hash(step2)
    history[1]["when"] = {1, 2}  # refused, with the place named
    with pytest.raises(NonSerializableAgentEventError) as caught:
        check_state_hash(step2, state_hash(step1))
    assert caught.value.path == "context.history[1].when"


def test_never_mutates_what_it_hashes() -> None:
    value = {"context": {"b": [1.0, {"z": 2**60, "\U0001f600": 0.5}], "a": "x"}, "status": "active"}
    before = copy.deepcopy(value)
    check_state_hash(value, WRONG)
    assert value == before


# Random edits, as a fold makes them: copy-on-write (a new container along the path, the rest shared)
# or in place (the container itself edited; the machine is impure, or someone holds a reference).
coerced_leaves = st.sampled_from([math.nan, math.inf, (1,), Color.RED, uuid.UUID(int=1), orjson.Fragment(b"0")])
refused_leaves = st.sampled_from([{1, 2}, b"x", Name("n"), 2**60 + 1, "\ud83d"])
edit_values = json_values | coerced_leaves | refused_leaves
edits = st.lists(
    st.tuples(st.lists(st.integers(0, 7), max_size=4), st.sampled_from(["cow", "inplace"]), edit_values),
    max_size=12,
)


def apply_edit(root: dict[str, Any], path: list[int], mode: str, new: Any) -> dict[str, Any]:
    """Walk `path` (indices taken modulo the container size) and set the reached slot to `new`."""

    def slot(container: Any, choice: int) -> Any:
        keys = list(container) if isinstance(container, dict) else list(range(len(container)))
        return keys[choice % len(keys)] if keys else None

    if mode == "inplace":
        container: Any = root
        for choice in path:
            key = slot(container, choice)
            if key is None or not isinstance(container[key], dict | list):
                break
            container = container[key]
        key = slot(container, path[-1] if path else 0)
        if key is None:
            if isinstance(container, list):
                container.append(new)
            else:
                container["k"] = new
        else:
            container[key] = new
        return root

    def rebuild(container: Any, rest: list[int]) -> Any:
        key = slot(container, rest[0] if rest else 0)
        copy_ = dict(container) if isinstance(container, dict) else list(container)
        if key is None:
            if isinstance(copy_, list):
                copy_.append(new)
            else:
                copy_["k"] = new
            return copy_
        child = container[key]
        copy_[key] = rebuild(child, rest[1:]) if rest[1:] and isinstance(child, dict | list) else new
        return copy_

    rebuilt: dict[str, Any] = rebuild(root, path)
    return rebuilt


@settings(max_examples=300, deadline=None)
@given(json_values, edits, st.booleans())
def test_equals_state_hash_over_random_edit_sequences(
    base: Any, steps: list[tuple[list[int], str, Any]], record_right: bool,
) -> None:
    snapshot = {"status": "active", "value": "idle", "context": {"v": copy.deepcopy(base), "n": 0}, "children": {}}
    previous = WRONG
    for path, mode, new in [([], "cow", 0), *steps]:
        snapshot = apply_edit(snapshot, path, mode, new)
        plain = outcome(state_hash, snapshot)
        if plain[0] == "error":
            # Not strict JSON: refused alike against a record it does not match (a coerced value that
            # renders exactly as recorded verifies: test_a_coerced_value_is_refused_unless_...).
            assert outcome(lambda value: check_state_hash(value, WRONG), snapshot) == plain
            return
        expected = plain[1] if record_right else previous
        assert check_state_hash(snapshot, expected) == plain[1]
        previous = plain[1]


def counting_machine(*, in_place: bool) -> Any:
    """Appends every NOTE to `context.notes`, as a copy (pure) or in place (impure: the list is shared
    with the previous snapshot)."""

    def notes(context: dict[str, Any], event: dict[str, Any], params: Any) -> list[Any]:
        if in_place:
            context["notes"].append({"text": event["text"]})
            return context["notes"]  # type: ignore[no-any-return]
        return [*context["notes"], {"text": event["text"]}]

    return setup(
        actions={"note": assign({"notes": notes, "count": lambda c, e, p: c["count"] + 1})},
    ).create_machine({
        "id": "notes", "version": "1", "initial": "on",
        "context": lambda input: {"notes": [{"text": "first"}], "count": 0},
        "states": {"on": {"on": {"NOTE": {"actions": "note"}}}},
    })


def notes_log(machine: Any, count: int) -> list[dict[str, Any]]:
    """`count` NOTE entries after the init, each hashed as the recorder hashes it, at its step."""
    snapshot, _ = initial_transition(machine)
    entries = [init_entry(machine)]
    for index in range(1, count + 1):
        event = {"type": "NOTE", "text": f"note {index}"}
        snapshot, _ = transition(machine, snapshot, event)
        entries.append(create_replay_entry(machine, event, index, snapshot_after=snapshot))
    return entries


@pytest.mark.parametrize("in_place", [False, True], ids=["copy", "in-place"])
def test_a_log_of_a_machine_that_edits_its_context_in_place_verifies(in_place: bool) -> None:
    machine = counting_machine(in_place=in_place)
    entries = notes_log(machine, 29)
    report = verify_log(machine, entries)
    assert report.ok, report
    assert report.checked == 30
    assert replay(machine, entries).checked == 30
    # An edited payload still shows: the fold derives another state from entry 10 on.
    entries[10] = {**entries[10], "event": {"type": "NOTE", "text": "edited"}}
    report = verify_log(machine, entries)
    assert report.first_divergence == 10


@pytest.mark.parametrize("edit", [None, 50, 95])
def test_in_place_edits_across_a_batch_are_hashed_as_each_step_left_the_state(edit: int | None) -> None:
    """The verifying fold hashes 32 states together, after later steps ran (eventlog/verifying_fold.py); each
    state's text is taken at its step, so a machine that appends to a context list in place verifies over many
    batches, and a divergence reports the hash of the state its own step left (hashed here at each step), not
    of the list as the later steps of its batch grew it."""
    machine = counting_machine(in_place=True)
    entries = notes_log(machine, 119)
    if edit is not None:
        entries[edit] = {**entries[edit], "event": {"type": "NOTE", "text": "edited"}}
    at_each_step = [
        (step.index, state_hash(machine.get_persisted_snapshot(step.snapshot)))
        for step in fold(machine, entries)
    ]
    report = verify_log(machine, entries)
    assert [(d.index, d.actual_hash) for d in report.divergences] == [
        (index, digest) for index, digest in at_each_step if digest != entries[index]["verification"]["stateHash"]
    ]
    assert report.checked == 120
    assert report.divergent_indices == ([] if edit is None else list(range(edit, 120)))


_NUMBER_FORMS = re.compile(rb"\.0(?![0-9])|[0-9]e[-+]")  # the rule, as one regex (verify_hash scans faster)
_ASTRAL_LEAD = re.compile(rb"[\xf0-\xf4]")


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["0", "7", ".", "e", "E", "+", "-", "\"", "a", "{", "}", "é", "€", "😀", "\U0010ffff"]),
                max_size=40).map(lambda parts: "".join(parts).encode()))
def test_is_jcs_text_is_the_rule_it_states(text: bytes) -> None:
    """No ".0" ending a number, no digit before "e+"/"e-", no 4-byte UTF-8: the C scans say what the regexes say."""
    assert is_jcs_text(text) is (_NUMBER_FORMS.search(text) is None and _ASTRAL_LEAD.search(text) is None)
