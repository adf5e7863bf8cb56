"""`find_runs` against a brute force over a real store: every thread replayed prefix by prefix, and searched
with the explorer's own `ex.search` (the rules `find_runs` promises to share)."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import random
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from agent_explorer import Explorer, find_runs, replay
from agent_explorer.errors import AgentError

from . import machines
from .conftest import AGENT, Row, build_sqlite, record

WORDS = ["refund", "chargeback", "shipping", "invoice", "Refund-42"]


def random_threads(seed: int, count: int) -> dict[str, tuple[list[dict[str, Any]], Row]]:
    """Runs that wander: questions and replies from a small vocabulary, rejections that loop back, usage."""
    rng = random.Random(seed)
    threads: dict[str, tuple[list[dict[str, Any]], Row]] = {}
    for n in range(count):
        events: list[dict[str, Any]] = []
        state = "waiting"
        for _ in range(rng.randint(0, 9)):
            if state == "waiting":
                events.append({"type": "ASK", "question": f"about my {rng.choice(WORDS)}"})
                state = "drafting"
            elif state == "drafting":
                events.append({"type": "xstate.done.actor.draft", "output": {"text": f"{rng.choice(WORDS)} noted"}})
                state = "reviewing"
            elif state == "reviewing":
                if rng.random() < 0.3:
                    events.append({"type": "@agent.usage", "requestId": "draft#1", "model": rng.choice(["m1", "m2"]),
                                   "usage": {"inputTokens": 5, "outputTokens": 1, "totalTokens": 6}})
                    continue
                choice = rng.choice(["APPROVE", "REJECT", "REJECT"])
                events.append({"type": choice})
                state = "sent" if choice == "APPROVE" else "waiting"
            else:
                events.append({"type": "ASK", "question": "ignored after the end"})
        threads[f"t{n:03d}"] = (record(machines.agent, events, f"t{n}"), Row("idle"))
    return threads


def brute(threads: dict[str, tuple[list[dict[str, Any]], Row]], *, state: str | None = None,
          event_type: str | None = None, text: str | None = None) -> pd.DataFrame:
    rows: dict[str, dict[str, int]] = {}
    for thread_id, (entries, _) in threads.items():
        found: dict[str, int | None] = {}
        if state is not None:
            target = state.removeprefix("#runs_agent.") if state.startswith("#") else state
            found["state_index"] = next(
                (i for i in range(len(entries))
                 if replay(machines.agent, entries[: i + 1], verify=False).snapshot.matches(target)), None)
        if event_type is not None:
            found["event_index"] = next((i for i, e in enumerate(entries) if e["event"]["type"] == event_type), None)
        if text is not None:
            hits = Explorer(machines.agent, entries).search(text)
            found["text_index"] = min(int(hit) for hit in hits) if hits else None
        if all(index is not None for index in found.values()):
            rows[thread_id] = {key: int(index) for key, index in found.items() if index is not None}
    columns = [c for c, v in (("state_index", state), ("event_index", event_type), ("text_index", text)) if v]
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=columns).astype("int64")
    frame.index = pd.Index(list(rows), name="thread_id", dtype="object")
    return frame


CRITERIA = [
    {"state": "reviewing"},
    {"state": "#runs_agent.sent"},
    {"state": "drafting", "event_type": "REJECT"},
    {"event_type": "@agent.usage"},
    {"text": "refund"},
    {"text": "CHARGEBACK"},
    {"text": "noted", "state": "waiting"},
    {"state": "expired"},
]


@pytest.fixture(scope="module")
def random_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any]]:
    threads = random_threads(25, 60)
    return build_sqlite(tmp_path_factory.mktemp("find") / "runs.db", threads), threads


@pytest.mark.parametrize("criteria", CRITERIA, ids=lambda c: "+".join(f"{k}={v}" for k, v in c.items()))
def test_find_runs_equals_a_brute_force(random_store: tuple[str, dict[str, Any]], criteria: dict[str, str]) -> None:
    url, threads = random_store
    got = find_runs(url, AGENT, **criteria)
    expected = brute(threads, **criteria)
    if criteria != {"state": "expired"}:
        assert len(expected) > 0, "a criterion no thread meets proves little"
    pd.testing.assert_frame_equal(got, expected, check_index_type=False)


def test_find_runs_on_a_process_pool(random_store: tuple[str, dict[str, Any]]) -> None:
    url, threads = random_store
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        got = find_runs(url, AGENT, state="reviewing", text="refund", executor=pool, batch_size=7)
    pd.testing.assert_frame_equal(got, brute(threads, state="reviewing", text="refund"), check_index_type=False)


def test_other_machines_and_unreadable_threads_are_named_not_matched(sqlite_runs: str) -> None:
    found = find_runs(sqlite_runs, AGENT, event_type="ASK")
    assert "h-other-machine" not in found.index and found.attrs["skipped"] == ["h-other-machine"]
    assert set(found.attrs["unreadable"]) == {"i-no-init", "j-written-outside"}


@pytest.mark.parametrize(
    ("criteria", "code"),
    [({}, "invalid-argument"), ({"state": "nowhere"}, "unknown-state"), ({"state": "#nowhere"}, "unknown-state"),
     ({"text": ""}, "invalid-argument")],
)
def test_bad_criteria(sqlite_runs: str, criteria: dict[str, str], code: str) -> None:
    with pytest.raises(AgentError) as caught:
        find_runs(sqlite_runs, AGENT, **criteria)
    assert caught.value.code == code


def test_postgres_finds_the_same(postgres_runs: str, sqlite_runs: str, tmp_path: Path) -> None:
    for criteria in ({"state": "drafting"}, {"text": "refund"}, {"event_type": "APPROVE"}):
        pd.testing.assert_frame_equal(find_runs(postgres_runs, AGENT, **criteria),
                                      find_runs(sqlite_runs, AGENT, **criteria))
