"""A small agent-shaped machine and recorded runs of it, built with the real engine and log functions.

Shared by the explorer's unit tests, browser tests and benchmarks/explorer.py. Deterministic: fixed clock
and ids, so a run built twice is byte-identical.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from agent_explorer import create_replay_entry, init_entry
from agent_explorer.engine import assign, initial_transition, setup, transition

XSS = "<img src=x onerror=alert(1)>"


def make_machine(version: str = "1", *, step: int = 1) -> Any:
    """idle -(START)-> working (parallel: draft / monitor) -(APPROVE)-> done; NOTE and TICK count."""
    bump = assign({"n": lambda context, event, params: context["n"] + step})
    remember = assign(
        {
            "notes": lambda context, event, params: [
                *context["notes"],
                event.get("text"),
            ][-5:]
        }
    )
    return setup(
        guards={"hasText": lambda context, event, params: bool(event.get("text", "x"))},
        actions={"bump": bump, "remember": remember},
    ).create_machine(
        {
            "id": "agent",
            "version": version,
            "context": {
                "n": 0,
                "notes": [],
                "owner": {"name": "ada", "role": "reviewer"},
            },
            "initial": "idle",
            "states": {
                "idle": {
                    "tags": ["waiting"],
                    "on": {
                        "START": "working",
                        "NOTE": {"actions": ["bump", "remember"]},
                    },
                },
                "working": {
                    "type": "parallel",
                    "on": {"CANCEL": "idle"},
                    "states": {
                        "draft": {
                            "initial": "writing",
                            "states": {
                                "writing": {
                                    "tags": ["busy"],
                                    "on": {
                                        "DONE": {"target": "review", "guard": "hasText"}
                                    },
                                    "after": {500: "review"},
                                },
                                "review": {
                                    "on": {
                                        "APPROVE": "#agent.done",
                                        "REVISE": "writing",
                                    }
                                },
                                "hist": {"type": "history", "history": "deep"},
                            },
                        },
                        "monitor": {
                            "initial": "ok",
                            "states": {"ok": {"on": {"TICK": {"actions": "bump"}}}},
                        },
                    },
                },
                "done": {"type": "final"},
            },
        }
    )


def _clock(start: datetime) -> Iterator[datetime]:
    moment = start
    while True:
        yield moment
        moment += timedelta(milliseconds=250)


def record(
    machine: Any, events: list[dict[str, Any]], *, hash_every: int = 1
) -> list[dict[str, Any]]:
    """Fold `events` live and journal each as an entry (usage records pass through, as the runtime does)."""
    ticks = _clock(datetime(2026, 1, 2, 9, 30, tzinfo=UTC))
    entries = [
        init_entry(
            machine, now=lambda: next(ticks), id="e0", metadata={"executionId": "run-1"}
        )
    ]
    snapshot, _ = initial_transition(machine)
    for i, event in enumerate(events, start=1):
        if event["type"] != "@agent.usage":
            snapshot, _ = transition(machine, snapshot, event)
        entries.append(
            create_replay_entry(
                machine,
                event,
                i,
                snapshot_after=snapshot
                if i % hash_every == 0 or i == len(events)
                else None,
                causation_id=f"e{i - 1}" if event["type"] == "@agent.usage" else None,
                now=lambda: next(ticks),
                id=f"e{i}",
            )
        )
    return entries


def usage(i: int, model: str = "small", tokens: int = 30) -> dict[str, Any]:
    return {
        "type": "@agent.usage",
        "requestId": f"req-{i}",
        "model": model,
        "usage": {
            "inputTokens": tokens - 10,
            "outputTokens": 10,
            "totalTokens": tokens,
        },
    }


SAMPLE_EVENTS: list[dict[str, Any]] = [
    {
        "type": "NOTE",
        "text": XSS,
    },  # 1: idle, n=1, the payload a browser must show as text
    {"type": "START"},  # 2: -> working
    usage(3, "small", 40),  # 3
    {"type": "TICK"},  # 4: n=2
    {"type": "DONE", "text": "draft ready"},  # 5: -> review
    usage(6, "large", 120),  # 6
    {"type": "NOTE", "text": "ignored while working"},  # 7: ignored in working
    {"type": "APPROVE"},  # 8: -> done
]


def sample_run(machine: Any | None = None) -> list[dict[str, Any]]:
    return record(machine or make_machine(), SAMPLE_EVENTS)


def long_events(n: int) -> list[dict[str, Any]]:
    """`n` events cycling through the chart (never reaching `done`), with a usage record every 5th."""
    cycle: list[dict[str, Any]] = [
        {"type": "NOTE", "text": "hello"},
        {"type": "START"},
        {"type": "TICK"},
        {"type": "TICK"},
        {"type": "DONE", "text": "x"},
        {"type": "REVISE"},
        {"type": "TICK"},
        {"type": "CANCEL"},
    ]
    out: list[dict[str, Any]] = []
    for i in range(n):
        out.append(usage(i) if i % 5 == 4 else cycle[i % len(cycle)])
    return out


def tamper(
    entries: list[dict[str, Any]], index: int, **event_changes: Any
) -> list[dict[str, Any]]:
    """A copy of the log with entry `index`'s event edited in place (its recorded hash left as it was)."""
    out = [dict(e) for e in entries]
    out[index] = {**out[index], "event": {**out[index]["event"], **event_changes}}
    return out
