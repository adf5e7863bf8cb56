"""Canonical hashing: RFC 8785 vectors, fast path == exact path, and the npm `canonicalize` oracle."""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import random
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_explorer.canonical.jcs import (
    _canonical_text,
    canonical_json,
    canonical_json_bytes,
    format_number,
    state_hash,
)
from agent_explorer.canonical.strict import (
    MAX_SAFE_INTEGER,
    NEEDS_UTF16_KEY_ORDER,
    json_flags,
)
from agent_explorer.canonical.verify_hash import check_state_hash
from agent_explorer.errors import NonSerializableAgentEventError

NODE_DIR = Path(__file__).resolve().parents[1] / "node"
JCS_SCRIPT = NODE_DIR / "canonicalize" / "jcs_batch.mjs"


def from_bits(hex_bits: str) -> float:
    return float(struct.unpack(">d", bytes.fromhex(hex_bits))[0])


def exact(value: object) -> str:
    """The exact (slow) canonicaliser, bypassing the orjson fast path."""
    return _canonical_text(value, bool(json_flags(value) & NEEDS_UTF16_KEY_ORDER))


# RFC 8785 Appendix B: IEEE-754 bit patterns and the text JCS (ECMAScript) prints for them.
APPENDIX_B = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


@pytest.mark.parametrize(("bits", "expected"), APPENDIX_B, ids=[b for b, _ in APPENDIX_B])
def test_rfc8785_appendix_b_numbers(bits: str, expected: str) -> None:
    x = from_bits(bits)
    assert format_number(x) == expected
    assert canonical_json(x) == expected
    assert canonical_json([x]) == f"[{expected}]"


def test_rfc8785_section_3_2_4_example_bytes() -> None:
    text = (
        '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",'
        ' "literals": [null, true, false]}'
    )
    expected = (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )
    assert canonical_json(json.loads(text)) == expected
    assert state_hash(json.loads(text)) == hashlib.sha256(expected.encode()).hexdigest()


def test_rfc8785_section_3_2_3_key_order_is_by_utf16_code_units() -> None:
    names = {
        "\u20ac": "Euro Sign",
        "\r": "Carriage Return",
        "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One",
        "\U0001f600": "Emoji: Grinning Face",
        "\u0080": "Control",
        "\u00f6": "Latin Small Letter O With Diaeresis",
    }
    ordered = list(json.loads(canonical_json(names)).values())
    # Code-point order would put the emoji (U+1F600) last; UTF-16 puts its high surrogate
    # (0xD83D) before U+FB33.
    assert ordered == [
        "Carriage Return",
        "One",
        "Control",
        "Latin Small Letter O With Diaeresis",
        "Euro Sign",
        "Emoji: Grinning Face",
        "Hebrew Letter Dalet With Dagesh",
    ]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        pytest.param(-0.0, "0", id="negative-zero"),
        pytest.param(1e21, "1e+21", id="1e21"),
        pytest.param(1e20, "100000000000000000000", id="1e20"),
        pytest.param(10**20, "100000000000000000000", id="1e20-int"),
        pytest.param(2**60, "1152921504606847000", id="2**60-int-prints-as-its-double"),
        pytest.param(1e-7, "1e-7", id="1e-7"),
        pytest.param(1.5e-6, "0.0000015", id="1.5e-6"),
        pytest.param(100.0, "100", id="integral-float"),
        pytest.param(0.1 + 0.2, "0.30000000000000004", id="0.1+0.2"),
        pytest.param(MAX_SAFE_INTEGER, "9007199254740991", id="2**53-1"),
        pytest.param("\x00\x08\t\n\x0b\x0c\r\x1f\x7f\"\\/", '"\\u0000\\b\\t\\n\\u000b\\f\\r\\u001f\x7f\\"\\\\/"', id="escapes"),
        pytest.param({"b": [], "a": {}}, '{"a":{},"b":[]}', id="nested-empties"),
    ],
)
def test_known_canonical_texts(value: object, text: str) -> None:
    assert canonical_json(value) == text
    assert exact(value) == text


def test_state_hash_is_lowercase_sha256_hex_of_the_utf8_text() -> None:
    value = {"z": "é😀", "a": [1, 0.5, None]}
    digest = state_hash(value)
    assert digest == hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()
    assert len(digest) == 64 and digest == digest.lower()


def test_hash_ignores_insertion_order_but_not_content() -> None:
    assert state_hash({"a": 1, "b": {"x": 1, "y": 2}}) == state_hash({"b": {"y": 2, "x": 1}, "a": 1})
    assert state_hash({"a": 1}) != state_hash({"a": 2})
    assert state_hash({"a": 1}) != state_hash({"a": 1.5})


def test_an_int_and_its_equal_double_hash_alike_as_in_javascript() -> None:
    assert state_hash({"n": 10**20}) == state_hash({"n": 1e20})
    assert state_hash({"n": 2**60}) == state_hash({"n": float(2**60)})
    assert state_hash({"n": 3}) == state_hash({"n": 3.0})


@pytest.mark.parametrize(
    "bad", [math.nan, math.inf, (1, 2), {1: 2}, "\ud800", 2**53 + 1], ids=repr
)
def test_state_hash_refuses_what_is_not_json(bad: object) -> None:
    with pytest.raises(NonSerializableAgentEventError) as caught:
        state_hash({"context": {"x": bad}})
    assert caught.value.path.startswith("context.x")


@pytest.mark.parametrize("leaf", ["leaf", 50.0, {"\U0001f600": 1}], ids=repr)
def test_nesting_beyond_orjsons_limit_and_the_interpreter_stack(leaf: Any) -> None:
    for depth in (300, 5000):
        value: Any = leaf
        for i in range(depth):
            value = [value] if i % 2 else {"k": value}
        text = canonical_json(value)
        assert text.count("[") + text.count("{") == depth + (leaf.__class__ is dict)
        assert text == exact(value)


def test_orjson_prints_the_safe_band_exactly_as_ecmascript() -> None:
    # The fast path trusts orjson for non-integral doubles with |x| >= 1e-5; pin that here on a
    # broad seeded sample (the Node test pins format_number itself against V8).
    rng = random.Random(2053)
    checked = 0
    for _ in range(20000):
        x = from_bits(f"{rng.getrandbits(64):016x}")
        if not math.isfinite(x) or x.is_integer() or abs(x) < 1e-5:
            x = rng.uniform(-1e6, 1e6) * 10 ** rng.randint(-5, 9)
            if x.is_integer() or abs(x) < 1e-5:
                continue
        assert orjson.dumps(x).decode() == format_number(x), repr(x)
        checked += 1
    assert checked > 15000


json_leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**64), max_value=2**64).filter(
        lambda n: abs(n) <= MAX_SAFE_INTEGER or float(n) == n
    )
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=("Cs",)), max_size=8)
)
json_values = st.recursive(
    json_leaves,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(
        st.text(st.characters(exclude_categories=("Cs",)), max_size=4), children, max_size=5
    ),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_fast_path_equals_exact_path(value: object) -> None:
    assert canonical_json_bytes(value) == exact(value).encode("utf-8")


@pytest.mark.parametrize(
    "value",
    [
        pytest.param({"b": [1.0, {"z": 2**60, "a": 0.5}], "a": "x"}, id="patched-numbers"),
        pytest.param({"x": {"\U0001f600": {"\ue000": 1.0, "a": [3.0]}, "\ue000": 0.25}}, id="astral-nested"),
        pytest.param([{"\U0001f600": 1}, {"k": 1e-7}, 1e21, -0.0], id="list-of-mixed"),
    ],
)
def test_patched_orjson_path_equals_exact_path(value: object) -> None:
    before = json.dumps(value, sort_keys=True)
    assert canonical_json_bytes(value) == exact(value).encode("utf-8")
    assert json.dumps(value, sort_keys=True) == before  # copy-on-write never touches the input


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_canonical_text_parses_back_to_the_same_value(value: object) -> None:
    again = json.loads(canonical_json(value))
    assert canonical_json(again) == canonical_json(value)


# ------------------------------------------------------------------------------------------------
# The oracle: npm `canonicalize` 2.0.0 in one Node process.


def hard_values() -> list[Any]:
    """Values where JCS implementations usually go wrong, plus seeded random doubles."""
    rng = random.Random(8785)
    values: list[Any] = [from_bits(bits) for bits, _ in APPENDIX_B]
    values += [
        1e21, 1e-7, 1e-6, 5e-324, 0.1 + 0.2, -0.0, 0.0, MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER,
        2**53, 2**60, 10**20, 10**21, 10**22, 1e20, 9.999999999999999e20, 1e16, 1.5e16,
        123.0, -1.0, 0.5, 1e-5, 9.99e-6, 1.5e-6, 1e300, -1e-300, 2.2250738585072014e-308,
        4.9406564584124654e-324, 1.7976931348623157e308, 0.000001, 0.0000001, 12345678.9,
        int(1.7976931348623157e308), -(2**63), 2**64,
    ]
    values += [m * 10.0**e for e in range(-30, 31, 3) for m in (1.0, 1.5, 7.25)]
    for _ in range(60):
        x = from_bits(f"{rng.getrandbits(64):016x}")
        values.append(x if math.isfinite(x) else rng.random())
    values += [round(rng.uniform(-1e6, 1e6), rng.randint(0, 8)) for _ in range(20)]
    values += [rng.random() * 10.0 ** rng.randint(-12, 25) for _ in range(20)]
    strings = [
        "", "\x00", "\x1f", "\x7f", "\u2028\u2029", "\"\\/", "\b\f\n\r\t\x0b", "é", "€",
        "\U0001f600", "\ufeff", "\uffff", "\U0010ffff", "mixed 😀 \x01 text \"q\"",
        "".join(chr(c) for c in range(0x20)),
    ]
    values += strings
    astral_keys = ["\ue000", "\U0001f600", "\uffff", "\U00010000", "a", "", "A", "aa", "é",
                   "\ud7ff", "\U0001f600a", "\U0001f600\ue000", "\ufb33", "1", "10", "2", "__proto__"]
    values.append({k: i for i, k in enumerate(astral_keys)})
    values.append({k: {k2: k for k2 in astral_keys[:6]} for k in reversed(astral_keys)})
    for _ in range(10):
        keys = rng.sample(astral_keys, k=rng.randint(2, len(astral_keys)))
        values.append({k: rng.choice([1.0, 0.25, "x", None, [], {}]) for k in keys})
    values += [[], {}, [[]], [{}], {"a": {}}, {"a": []}, [[[]], {}, [{"": []}]], {"": {"": {}}}]
    nested: Any = 1.5
    for i in range(200):
        nested = [nested] if i % 2 else {"level": nested, "n": i}
    values.append(nested)
    values.append({
        "status": "active", "value": {"chat": {"draft": "waiting"}}, "historyValue": {},
        "context": {"n": 3, "score": 0.73, "total": 50.0, "big": 10**20, "msg": "hé 😀",
                    "tags": ["a", "b"], "none": None, "ok": True},
        "children": {},
    })
    return values


def run_canonicalize_oracle(values: list[Any]) -> list[dict[str, str]]:
    node = shutil.which("node")
    if node is None or not (NODE_DIR / "node_modules" / "canonicalize").is_dir():
        message = "node or tests/node/node_modules/canonicalize is missing (npm install in tests/node)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    # Python writes each double with repr (shortest round-trip), which JSON.parse reads back as
    # the same double; astral characters travel as surrogate-pair escapes.
    payload = json.dumps(values, ensure_ascii=True, allow_nan=False)
    completed = subprocess.run(
        [node, str(JCS_SCRIPT)], input=payload.encode(), capture_output=True, timeout=60,
        check=False, cwd=NODE_DIR,
    )
    assert completed.returncode == 0, completed.stderr.decode()
    results: list[dict[str, str]] = json.loads(completed.stdout)
    return results


@pytest.mark.node
def test_canonical_text_and_hash_match_npm_canonicalize() -> None:
    values = hard_values()
    assert len(values) >= 200
    results = run_canonicalize_oracle(values)
    assert len(results) == len(values)
    mismatches = []
    for value, result in zip(values, results, strict=True):
        assert "error" not in result, (value, result)
        js_bytes = base64.b64decode(result["canonical"])
        if (
            canonical_json_bytes(value) != js_bytes
            or state_hash(value) != result["sha256"]
            or check_state_hash(value, result["sha256"]) != result["sha256"]  # the verifying fold's
            or check_state_hash(value, None) != result["sha256"]
        ):
            mismatches.append((value, js_bytes, canonical_json_bytes(value)))
    assert not mismatches, mismatches[:5]


def test_a_missing_node_fails_under_ci_and_skips_locally(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="node"):
        run_canonicalize_oracle([1])
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="node"):
        run_canonicalize_oracle([1])
