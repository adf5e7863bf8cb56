"""Machines the run list tests fold; importable by worker processes (they import them by `module:attr`)."""

from __future__ import annotations

from typing import Any

from agent_explorer import assign, create_text_logic, setup, setup_agent


def _agent(version: str, *, expire_ms: int = 60_000) -> Any:
    return setup_agent(
        actors={"draft": create_text_logic(prompt=lambda context, event: f"Reply to {context['question']}")},
    ).create_machine({
        "id": "runs_agent",
        "version": version,
        "context": {"question": "", "reply": ""},
        "initial": "waiting",
        "states": {
            "waiting": {
                "after": {expire_ms: "expired"},
                "on": {"ASK": {"target": "drafting",
                               "actions": assign({"question": lambda context, event, params: event["question"]})}},
            },
            "drafting": {
                "invoke": {"id": "draft", "src": "draft",
                           "onDone": {"target": "reviewing",
                                      "actions": assign({"reply": lambda context, event, params: event["output"]["text"]})}},
            },
            "reviewing": {"on": {"APPROVE": "sent", "REJECT": "waiting"}},
            "sent": {"type": "final"},
            "expired": {"type": "final"},
        },
    })


agent = _agent("1")
"""The machine under test."""

agent_v2 = _agent("2", expire_ms=30_000)
"""Its next version (another timer): same id, another structure; a cache of `agent` must not serve it."""

other = setup().create_machine({
    "id": "runs_other",
    "version": "1",
    "initial": "idle",
    "states": {"idle": {"on": {"GO": "gone"}}, "gone": {"type": "final"}},
})
"""Another machine id: its threads are `skipped`."""


agent_rechart = _agent("1", expire_ms=5_000)
"""`agent` with another chart under the same declared version (a shorter timer): the cache must not serve it."""

__all__ = ["agent", "agent_rechart", "agent_v2", "other"]
