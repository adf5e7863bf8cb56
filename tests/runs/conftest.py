"""A store of runs of every fate, in a real SQLite file and on the PostgreSQL server, with what each row must say.

`RUNS` names every thread, how it was recorded and what its run list row must hold, so each test states its
expectation once. The per-user cache goes to a folder of the test's own (`AGENT_EXPLORER_CACHE_DIR`).
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from filled_stores import schema_holding, sqlite_holding

from agent_explorer import create_replay_entry, init_entry, initial_transition, transition

from . import machines

AGENT = "tests.runs.machines:agent"


def record(machine: Any, events: list[dict[str, Any]], tag: str, *, start: str = "2026-01-01T00:00") -> list[dict[str, Any]]:
    """A log as run_agent journals it: init, then each event with the hash of the state it produced, a second apart."""
    entries = [init_entry(machine, metadata={"executionId": f"exec-{tag}"})]
    snapshot, _ = initial_transition(machine)
    for index, event in enumerate(events, start=1):
        if event.get("type") != "@agent.usage":
            snapshot, _ = transition(machine, snapshot, event)
        entries.append(create_replay_entry(machine, event, index, snapshot_after=snapshot))
    for index, entry in enumerate(entries):
        entry["id"] = f"{tag}-{index}"
        entry["recordedAt"] = f"{start}:{index:02d}.000Z"
    return entries


ASK = {"type": "ASK", "question": "where is my refund?"}
DONE = {"type": "xstate.done.actor.draft", "output": {"text": "On its way."}}
FAILED = {"type": "xstate.error.actor.draft", "error": {"message": "model down"}}
USAGE = {"type": "@agent.usage", "requestId": "draft#1", "model": "m1",
         "usage": {"inputTokens": 100, "outputTokens": 20, "totalTokens": 120}}
PRICES = {"m1": {"input": 3.0, "output": 15.0}}
COST = (100 * 3.0 + 20 * 15.0) / 1_000_000


@dataclass(frozen=True)
class Row:
    """What a thread's row must hold (None: not checked)."""

    status: str
    state: str = ""
    owed: int = 0
    verified: bool | None = True
    divergent_index: int | None = None
    total_tokens: int = 0
    error: str | None = None


def runs() -> dict[str, tuple[list[dict[str, Any]] | str, Row]]:
    """thread id -> (entries, or the raw body of a row written past the store; its row), in id order."""
    agent = machines.agent
    threads: dict[str, tuple[list[dict[str, Any]] | str, Row]] = {}
    threads["a-done"] = (record(agent, [ASK, DONE, USAGE, {"type": "APPROVE"}], "a"), Row("done", "sent", 0, True, None, 120))
    threads["b-idle"] = (record(agent, [], "b"), Row("idle", "waiting", 1))  # its expiry timer is owed
    threads["c-in-flight"] = (record(agent, [ASK], "c"), Row("in-flight", "drafting", 1))  # crashed mid-draft
    threads["d-error"] = (record(agent, [ASK, FAILED], "d"), Row("error", "drafting", 0))
    threads["e-reviewing"] = (record(agent, [ASK, DONE, USAGE], "e"), Row("idle", "reviewing", 0, True, None, 120))
    tampered = record(agent, [ASK, DONE, {"type": "APPROVE"}], "f")
    tampered[2]["verification"]["stateHash"] = "0" * 64
    threads["f-diverges"] = (tampered, Row("done", "sent", 0, False, 2))
    unhashed = record(agent, [ASK], "g")
    for entry in unhashed:
        entry.pop("verification", None)
    threads["g-unhashed"] = (unhashed, Row("in-flight", "drafting", 1, None))
    threads["h-other-machine"] = (record(machines.other, [{"type": "GO"}], "h"), Row("skipped", verified=None))
    no_init = record(agent, [ASK, DONE], "i")[1:]
    for index, entry in enumerate(no_init):
        entry["index"] = index
    threads["i-no-init"] = (no_init, Row("unreadable", verified=None, error="log-format"))
    threads["j-written-outside"] = (
        '{"schemaVersion": 1, "id": "j-0", "index": 0, "event": {"type": "@agent.init"',
        Row("unreadable", verified=None, error="could not read the thread"),
    )
    return threads


async def fill(store: Any, threads: dict[str, tuple[list[dict[str, Any]] | str, Row]]) -> list[str]:
    """Append every well-formed thread through the store's own API; return the ids of the raw rows."""
    raw = []
    for thread_id, (entries, _) in threads.items():
        if isinstance(entries, str):
            raw.append(thread_id)
        else:
            await store.append(thread_id=thread_id, expected_index=0, entries=copy.deepcopy(entries))
    return raw


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test caches in a folder of its own (worker processes inherit the variable)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("AGENT_EXPLORER_CACHE_DIR", str(folder))
    return folder


def build_sqlite(path: Path, threads: dict[str, tuple[list[dict[str, Any]] | str, Row]]) -> str:
    return sqlite_holding(path, threads, fill)


@pytest.fixture
def sqlite_runs(tmp_path: Path) -> Iterator[str]:
    """A SQLite file holding `runs()`; its URL."""
    yield build_sqlite(tmp_path / "runs.db", runs())


@pytest.fixture
async def postgres_runs() -> AsyncIterator[str]:
    """The same runs in a schema of their own on the PostgreSQL server; the URL (schema dropped afterwards)."""
    async with schema_holding("runs", runs(), fill) as url:
        yield url
