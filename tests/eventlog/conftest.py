"""Shared pieces of the log-core tests: a deterministic clock and id source, a stand-in machine,
a real engine machine, and a builder of well-formed logs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_explorer.eventlog.entries import create_replay_entry, init_entry


@dataclass(frozen=True)
class StandInSnapshot:
    value: str
    context: dict[str, Any] = field(default_factory=dict)


class StandInMachine:
    """The smallest object the log needs: id, version, get_persisted_snapshot (and, for the
    engine-less fallback of init_entry, its own initial_transition)."""

    id = "standin"
    version = "7"

    def initial_transition(self, input: Any = None) -> tuple[StandInSnapshot, list[Any]]:
        return StandInSnapshot("idle", {"input": input, "count": 0}), []

    def get_persisted_snapshot(self, snapshot: StandInSnapshot) -> dict[str, Any]:
        return {
            "status": "active",
            "value": snapshot.value,
            "historyValue": {},
            "context": dict(snapshot.context),
            "children": {},
        }


def make_clock(start: datetime | None = None, step_ms: int = 1) -> Callable[[], datetime]:
    moment = [start or datetime(2026, 1, 1, tzinfo=UTC)]

    def now() -> datetime:
        current = moment[0]
        moment[0] += timedelta(milliseconds=step_ms)
        return current

    return now


def counter_machine() -> Any:
    """A real engine machine: count up on INC, finish on STOP."""
    from agent_explorer.engine import assign, setup

    return setup(
        actions={"inc": assign({"count": lambda context, event, params: context["count"] + event.get("by", 1)})},
    ).create_machine(
        {
            "id": "counter",
            "version": "1",
            "context": lambda input: {"count": (input or {}).get("start", 0)},
            "initial": "counting",
            "states": {
                "counting": {"on": {"INC": {"actions": "inc"}, "STOP": "done"}},
                "done": {"type": "final"},
            },
        }
    )


def build_log(length: int, *, machine: Any = None, thread: str = "t") -> list[dict[str, Any]]:
    """A well-formed log of `length` entries (init + usage records), with deterministic ids."""
    machine = machine or StandInMachine()
    clock = make_clock()
    snapshot = StandInSnapshot("idle", {"count": 0})
    entries = [
        init_entry(
            machine,
            snapshot=machine.get_persisted_snapshot(snapshot),
            metadata={"executionId": f"exec-{thread}"},
            now=clock,
            id=f"{thread}-0",
        )
    ]
    for index in range(1, length):
        event = {
            "type": "@agent.usage",
            "requestId": f"draft#{index}",
            "model": "m-a" if index % 2 else "m-b",
            "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
        }
        entries.append(
            create_replay_entry(machine, event, index, snapshot_after=snapshot, now=clock, id=f"{thread}-{index}")
        )
    return entries


@pytest.fixture
def standin() -> StandInMachine:
    return StandInMachine()
