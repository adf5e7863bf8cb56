"""Frame building blocks: cumulative usage by prefix sums, change paths, state value text, divergence runs."""

from __future__ import annotations

import itertools
import random
from types import SimpleNamespace
from typing import Any

import pytest

from agent_explorer import get_usage_from_events
from agent_explorer.engine.values import value_text
from agent_explorer.explorer.usage import UsageIndex
from agent_explorer.explorer.values import path_segments
from agent_explorer.explorer.verification import VerificationSummary


def usage_entry(i: int, model: str, **usage: Any) -> dict[str, Any]:
    return {
        "id": f"e{i}",
        "index": i,
        "event": {
            "type": "@agent.usage",
            "requestId": f"r{i}",
            "model": model,
            "usage": usage,
        },
    }


def naive_totals(entries: list[dict[str, Any]], upto: int) -> dict[str, Any]:
    """The definition, folded the slow way: sum numeric usage fields of usage events in [0, upto]."""
    out: dict[str, Any] = {}
    by_model: dict[str, dict[str, Any]] = {}
    for entry in entries[: upto + 1]:
        event = entry["event"]
        if event["type"] != "@agent.usage":
            continue
        for key, value in event["usage"].items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                out[key] = out.get(key, 0) + value
                per = by_model.setdefault(event["model"], {})
                per[key] = per.get(key, 0) + value
    if by_model:
        out["byModel"] = by_model
    return out


def random_log(seed: int, n: int = 300) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out: list[dict[str, Any]] = [
        {"id": "e0", "index": 0, "event": {"type": "@agent.init"}}
    ]
    for i in range(1, n):
        if rng.random() < 0.3:
            fields = {
                "inputTokens": rng.randint(0, 50),
                "outputTokens": rng.randint(0, 50),
            }
            fields["totalTokens"] = fields["inputTokens"] + fields["outputTokens"]
            if rng.random() < 0.2:
                fields["cost"] = (
                    rng.random() / 100
                )  # a key that appears late and only sometimes
            if rng.random() < 0.1:
                fields["note"] = "not a number"
            out.append(usage_entry(i, rng.choice(["small", "large"]), **fields))
        else:
            out.append({"id": f"e{i}", "index": i, "event": {"type": "TICK"}})
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_usage_totals_equal_the_naive_fold_at_every_index(seed: int) -> None:
    entries = random_log(seed)
    index = UsageIndex(entries)
    for i in range(len(entries)):
        got, want = index.totals_at(i), naive_totals(entries, i)
        assert got.keys() == want.keys(), i
        for key in want:
            if key == "byModel":
                assert got[key].keys() == want[key].keys()
                for model in want[key]:
                    for k, v in want[key][model].items():
                        assert got[key][model][k] == pytest.approx(v)
            else:
                assert got[key] == pytest.approx(want[key]), (i, key)


@pytest.mark.parametrize("seed", [7, 8])
def test_usage_equals_get_usage_from_events_on_every_prefix(seed: int) -> None:
    entries = random_log(seed, n=120)
    index = UsageIndex(entries)
    for i in range(len(entries)):
        want = get_usage_from_events(entries[: i + 1])
        got = index.totals_at(i)
        if not got:  # before the first record the package reports zeros or nothing; both mean "nothing spent"
            assert not any(
                v for k, v in want.items() if k != "byModel"
            ) and not want.get("byModel")
            continue
        top = {k: v for k, v in got.items() if k != "byModel"}
        assert top == pytest.approx(
            {k: v for k, v in want.items() if k != "byModel"}
        ), i
        assert got["byModel"].keys() == want["byModel"].keys(), i
        for model, totals in want["byModel"].items():
            assert got["byModel"][model] == pytest.approx(totals), (i, model)


def test_usage_series_is_down_sampled_and_ends_at_the_last_record() -> None:
    entries = [usage_entry(i, "m", totalTokens=1) for i in range(5000)]
    series = UsageIndex(entries).series(max_points=100)
    assert len(series) <= 101
    assert series[-1] == [4999, 5000]
    assert all(a[0] < b[0] and a[1] <= b[1] for a, b in itertools.pairwise(series))
    assert UsageIndex([]).series() == [] and UsageIndex([]).totals_at(10) == {}


@pytest.mark.parametrize(
    ("path", "segments"),
    [
        (("context", "items", 3, "name"), ["context", "items", 3, "name"]),
        ("context.items[3].name", ["context", "items", 3, "name"]),
        ("/context/a~1b/0", ["context", "a/b", 0]),
        ("value", ["value"]),
    ],
    ids=["tuple", "dotted", "pointer", "top"],
)
def test_path_segments(path: Any, segments: list[Any]) -> None:
    assert path_segments(path) == segments


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("idle", "idle"),
        ({"working": "drafting"}, "working.drafting"),
        (
            {"working": {"draft": "writing", "monitor": "ok"}},
            "working.(draft.writing | monitor.ok)",
        ),
        ({"a": {}}, "a"),
    ],
)
def test_value_text(value: Any, text: str) -> None:
    assert value_text(value) == text


def test_verification_summary_from_a_report() -> None:
    divergence = SimpleNamespace(
        index=5,
        event_id="e5",
        event={"type": "GO"},
        kind="state",
        expected_hash="aa",
        actual_hash="bb",
    )
    report = SimpleNamespace(
        ok=False,
        first_divergence=5,
        divergent_indices=[5, 6, 7, 9, 12, 13],
        divergences=[divergence],
    )
    summary = VerificationSummary.from_report(report)
    assert summary.status == "diverged" and summary.first == 5 and summary.count == 6
    assert summary.ranges() == [[5, 7], [9, 9], [12, 13]]
    assert summary.ranges(cap=2) == [[5, 7], [9, 9]]
    payload = summary.to_json()
    assert payload["detail"] == {
        "index": 5,
        "eventId": "e5",
        "event": {"type": "GO"},
        "kind": "state",
        "expectedHash": "aa",
        "actualHash": "bb",
    }
    ok = VerificationSummary.from_report(
        SimpleNamespace(
            ok=True, first_divergence=None, divergent_indices=[], divergences=[]
        )
    )
    assert ok.status == "ok" and ok.to_json()["ranges"] == []


def test_a_context_too_large_to_draw_says_its_real_size() -> None:
    from agent_explorer import create_machine, init_entry
    from agent_explorer.explorer import Explorer
    from agent_explorer.explorer.frames import CONTEXT_BYTES_CAP

    machine = create_machine({"id": "m", "initial": "idle", "context": {"blob": "x" * (CONTEXT_BYTES_CAP * 3 // 2)},
                              "states": {"idle": {}}})
    frame = Explorer(machine, [init_entry(machine)]).frame
    assert frame["context"] is None
    assert frame["contextNote"].startswith(f"context is {CONTEXT_BYTES_CAP * 3 // 2 // 1000} kB")
