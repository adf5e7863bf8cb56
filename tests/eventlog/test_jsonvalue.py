"""Strict JSON: what is accepted, what is rejected, and how the error names the place."""

from __future__ import annotations

import collections
import enum
import json
import math
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_explorer.canonical.strict import (
    MAX_SAFE_INTEGER,
    NEEDS_NUMBER_FORMATTING,
    NEEDS_UTF16_KEY_ORDER,
    assert_json_serializable,
    json_flags,
)
from agent_explorer.errors import AgentError, NonSerializableAgentEventError


class Color(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Name(str):
    pass


def deep_list(depth: int) -> list[Any]:
    root: list[Any] = []
    node = root
    for _ in range(depth):
        child: list[Any] = []
        node.append(child)
        node = child
    return root


ACCEPTED = [
    pytest.param(None, id="null"),
    pytest.param(True, id="bool"),
    pytest.param(0, id="zero"),
    pytest.param(MAX_SAFE_INTEGER, id="max-safe-int"),
    pytest.param(-MAX_SAFE_INTEGER, id="min-safe-int"),
    pytest.param(2**53, id="2**53-equals-its-float"),
    pytest.param(10**20, id="1e20-as-int"),
    pytest.param(int(1.7976931348623157e308), id="largest-double-as-int"),
    # JSON.stringify(2**60) writes 1152921504606847000, which Python reads back as this int.
    pytest.param(1152921504606847000, id="int-as-javascript-writes-2**60"),
    pytest.param(-0.0, id="negative-zero"),
    pytest.param(5e-324, id="smallest-subnormal"),
    pytest.param(1.7976931348623157e308, id="largest-double"),
    pytest.param("", id="empty-string"),
    pytest.param("héllo 😀 \u2028 \x00 \x7f", id="unicode-and-controls"),
    pytest.param({"": {}, "😀": [], "weird key": [[], {}]}, id="nested-empties"),
    pytest.param({"event": {"items": [1, 2.5, "x", None, True, {"when": "2026-01-01"}]}}, id="mixed"),
]


@pytest.mark.parametrize("value", ACCEPTED)
def test_accepts_strict_json(value: object) -> None:
    assert_json_serializable(value)


def test_a_shared_subtree_is_not_a_cycle() -> None:
    shared = {"a": [1, 2]}
    assert_json_serializable({"left": shared, "right": shared, "list": [shared, shared]})


def test_nesting_deeper_than_the_interpreter_stack_is_accepted() -> None:
    assert_json_serializable({"deep": deep_list(5000)})


REJECTED = [
    pytest.param(
        {"event": {"items": [0, 1, 2, {"when": datetime(2026, 1, 1, tzinfo=UTC)}]}},
        "event.items[3].when",
        "datetime",
        id="datetime-deep",
    ),
    pytest.param({"ctx": {"weird key": float("nan")}}, 'ctx["weird key"]', "NaN", id="nan-odd-key"),
    pytest.param({"x": math.inf}, "x", "inf", id="inf"),
    pytest.param({"x": [-math.inf]}, "x[0]", "-inf", id="minus-inf"),
    pytest.param({"m": {3: "a"}}, "m[3]", "key of type int", id="int-key"),
    pytest.param({"m": {None: "a"}}, "m[None]", "key of type NoneType", id="none-key"),
    pytest.param({"t": (1, 2)}, "t", "tuple", id="tuple"),
    pytest.param({"s": {1, 2}}, "s", "set", id="set"),
    pytest.param({"s": frozenset()}, "s", "frozenset", id="frozenset"),
    pytest.param({"b": b"abc"}, "b", "bytes", id="bytes"),
    pytest.param({"b": bytearray(b"abc")}, "b", "bytearray", id="bytearray"),
    pytest.param({"d": date(2026, 1, 1)}, "d", "date", id="date"),
    pytest.param({"d": timedelta(seconds=3)}, "d", "timedelta", id="timedelta"),
    pytest.param({"n": Decimal("1.10")}, "n", "Decimal", id="decimal"),
    pytest.param({"f": lambda: None}, "f", "callable", id="lambda"),
    pytest.param({"f": len}, "f", "callable", id="builtin-function"),
    pytest.param({"o": object()}, "o", "object", id="object"),
    pytest.param({"e": Color.RED}, "e", "Color", id="enum"),
    pytest.param({"e": Level.HIGH}, "e", "subclass of int", id="int-enum"),
    pytest.param({"s": Name("x")}, "s", "subclass of str", id="str-subclass"),
    pytest.param({"d": collections.OrderedDict(a=1)}, "d", "subclass of dict", id="ordered-dict"),
    pytest.param({"s": "ok", "t": "bad \ud800 here"}, "t", "lone surrogate U+D800", id="lone-high"),
    pytest.param({"t": ["\udfff"]}, "t[0]", "lone surrogate U+DFFF", id="lone-low"),
    pytest.param({"\ud83d": 1}, '["\\ud83d"]', "key holds a lone surrogate", id="surrogate-key"),
    pytest.param({"n": 2**53 + 1}, "n", "IEEE-754 double", id="2**53+1"),
    pytest.param({"n": -(2**53) - 1}, "n", "IEEE-754 double", id="-(2**53)-1"),
    pytest.param({"n": 1152921504606847001}, "n", "IEEE-754 double", id="near-2**60"),
    pytest.param({"n": 10**400}, "n", "of 1329 bits", id="beyond-double-range"),
    pytest.param({"n": 10**5000}, "n", "bits", id="beyond-int-str-limit"),
    pytest.param(
        {"key with space": {"1abc": {"ok_name": [None, {"x": Decimal(1)}]}}},
        '["key with space"]["1abc"].ok_name[1].x',
        "Decimal",
        id="path-mixes-brackets-and-dots",
    ),
]


@pytest.mark.parametrize(("value", "path", "fragment"), REJECTED)
def test_rejects_with_the_path_of_the_offence(value: object, path: str, fragment: str) -> None:
    with pytest.raises(NonSerializableAgentEventError) as caught:
        assert_json_serializable(value)
    assert caught.value.path == path
    assert caught.value.code == "non-serializable"
    assert isinstance(caught.value, AgentError)
    assert fragment in str(caught.value)
    assert (path or "the top level") in str(caught.value)


def test_the_root_name_prefixes_the_path() -> None:
    with pytest.raises(NonSerializableAgentEventError) as caught:
        assert_json_serializable({"items": [0, {"when": datetime.now(UTC)}]}, "event")
    assert caught.value.path == "event.items[1].when"


def test_a_bad_root_is_named_as_the_top_level() -> None:
    with pytest.raises(NonSerializableAgentEventError) as caught:
        assert_json_serializable(math.nan)
    assert caught.value.path == ""
    assert "the top level" in str(caught.value)


def test_a_cycle_is_rejected_at_the_container_that_repeats() -> None:
    loop: dict[str, Any] = {"a": [1]}
    loop["a"].append(loop)
    with pytest.raises(NonSerializableAgentEventError) as caught:
        assert_json_serializable({"ctx": loop})
    assert caught.value.path == "ctx.a[1]"
    assert "cycle" in str(caught.value)


def test_a_cycle_below_deep_nesting_is_still_found() -> None:
    root = deep_list(3000)
    node = root
    while node:
        node = node[0]
    node.append(root)
    with pytest.raises(NonSerializableAgentEventError, match="cycle"):
        assert_json_serializable(root)


def test_bool_is_not_treated_as_an_out_of_range_int() -> None:
    assert json_flags([True, False]) == 0


@pytest.mark.parametrize(
    ("value", "flags"),
    [
        pytest.param({"a": 0.5, "b": 123456.789}, 0, id="plain-decimals-are-orjson-safe"),
        pytest.param({"a": 1.0}, NEEDS_NUMBER_FORMATTING, id="integral-float"),
        pytest.param([-0.0], NEEDS_NUMBER_FORMATTING, id="negative-zero"),
        pytest.param([1.5e-6], NEEDS_NUMBER_FORMATTING, id="tiny-float"),
        pytest.param([2**60], NEEDS_NUMBER_FORMATTING, id="big-int-that-is-a-double"),
        pytest.param({"😀": 1}, NEEDS_UTF16_KEY_ORDER, id="astral-key"),
        pytest.param({"k": "😀"}, 0, id="astral-value-is-fine"),
        pytest.param({"é\ue000": 1}, 0, id="bmp-key"),
        pytest.param({"😀": 1.0}, NEEDS_UTF16_KEY_ORDER | NEEDS_NUMBER_FORMATTING, id="both"),
    ],
)
def test_flags_report_what_orjson_would_get_wrong(value: object, flags: int) -> None:
    assert json_flags(value) == flags


def test_fast_and_careful_passes_agree_on_flags() -> None:
    # A lone NaN sends the whole value through the careful pass; its flags must match the fast ones.
    value: dict[str, Any] = {"😀": [1.0, 0.5, {"x": 2**60}], "plain": "text"}
    assert json_flags(value) == NEEDS_UTF16_KEY_ORDER | NEEDS_NUMBER_FORMATTING
    deep = {"deep": deep_list(2000), **value}
    assert json_flags(deep) == NEEDS_UTF16_KEY_ORDER | NEEDS_NUMBER_FORMATTING


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-MAX_SAFE_INTEGER, max_value=MAX_SAFE_INTEGER)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_everything_json_text_can_carry_round_trips_exactly(value: object) -> None:
    assert_json_serializable(value)
    again = orjson.loads(orjson.dumps(value))
    assert json.dumps(again, sort_keys=True) == json.dumps(value, sort_keys=True)


@settings(max_examples=100, deadline=None)
@given(json_values, st.sampled_from([math.nan, (1,), {1}, b"x", Decimal(2), 2**53 + 1]))
def test_one_bad_leaf_anywhere_is_found(value: object, bad: object) -> None:
    with pytest.raises(NonSerializableAgentEventError) as caught:
        assert_json_serializable({"ok": value, "bad": [bad]})
    assert caught.value.path == "bad[0]"
