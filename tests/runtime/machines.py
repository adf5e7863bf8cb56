"""Agent machines the runtime tests drive: real engine machines built with setup_agent.

`full_machine` exercises every effect kind a run journals: a task, a text request, a decision
whose first scripted choice a guard refuses, an `after` timer, and a fan-out of three spawned text
branches whose scripted latencies make them complete out of spawn order.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel, Field, field_validator

from agent_explorer.engine import assign, from_promise, raise_, send_to, spawn_child
from agent_explorer.runtime import (
    ScriptedModel,
    create_decision_logic,
    create_plan_logic,
    create_text_logic,
    setup_agent,
)

TASK_CALLS: list[dict[str, Any]] = []
USAGE = {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}


async def lookup(input: Any) -> dict[str, Any]:
    TASK_CALLS.append(dict(input))
    await asyncio.sleep(0.001)
    return {"facts": f"facts about {input['q']}"}


def _record_branch(context: dict[str, Any], event: dict[str, Any], params: Any) -> dict[str, Any]:
    branch = event["type"].rsplit(".", 1)[-1]
    return {**context["branches"], branch: event["output"]["text"]}


def _all_branches(context: dict[str, Any], event: Any, params: Any) -> bool:
    return len(context["branches"]) == 3


class ApproveEvent(BaseModel):
    type: str = "APPROVE"
    note: str = ""
    score: int = Field(default=1, ge=0, le=10)

    @field_validator("note")
    @classmethod
    def strip_note(cls, value: str) -> str:
        return value.strip()


full_setup = setup_agent(
    schemas={"APPROVE": ApproveEvent},
    actors={
        "lookup": from_promise(lookup),
        "draft": create_text_logic(prompt=lambda context, event: f"Draft about {context['facts']}"),
        "judge": create_decision_logic(
            prompt=lambda context, event: f"Judge: {context['text']}", events=["ACCEPT", "REVISE"]
        ),
        "branch": create_text_logic(prompt=lambda context, event: f"Branch for {context['text']}"),
    },
    guards={
        "allBranches": _all_branches,
        "canRevise": lambda context, event, params: False,
    },
)


def _spawn_branch(n: int) -> Any:
    return spawn_child("branch", id=f"b{n}", input={"n": n})


full_machine = full_setup.create_machine(
    {
        "id": "full",
        "version": "1",
        "context": lambda input: {
            "q": (input or {}).get("q", "?"),
            "facts": None,
            "text": None,
            "branches": {},
        },
        "initial": "lookup",
        "states": {
            "lookup": {
                "invoke": {
                    "src": "lookup",
                    "id": "lookup",
                    "input": lambda context, event, params: {"q": context["q"]},
                    "onDone": {"target": "drafting", "actions": assign({"facts": lambda c, e, p: e["output"]["facts"]})},
                }
            },
            "drafting": {
                "invoke": {
                    "src": "draft",
                    "id": "draft",
                    "onDone": {"target": "judging", "actions": assign({"text": lambda c, e, p: e["output"]["text"]})},
                }
            },
            "judging": {
                "invoke": {"src": "judge", "id": "judge"},
                "on": {"ACCEPT": "waiting", "REVISE": {"target": "drafting", "guard": "canRevise"}},
            },
            "waiting": {"after": {1000: "fanout"}},
            "fanout": {
                "entry": [_spawn_branch(0), _spawn_branch(1), _spawn_branch(2)],
                "on": {
                    "xstate.done.actor.b0": {"actions": assign({"branches": _record_branch})},
                    "xstate.done.actor.b1": {"actions": assign({"branches": _record_branch})},
                    "xstate.done.actor.b2": {"actions": assign({"branches": _record_branch})},
                },
                "always": {"target": "finished", "guard": "allBranches"},
            },
            "finished": {"type": "final"},
        },
        "output": lambda context, event, params: {"text": context["text"], "branches": context["branches"]},
    }
)

FULL_INPUT = {"q": "tides"}


BRANCH_LATENCY = {"b0": 0.03, "b1": 0.005, "b2": 0.015}


def full_model(latency: dict[str, float] | None = None) -> ScriptedModel:
    """Answers by prompt (so any resume order gets the same answers); branch latencies race:
    b1 finishes first, then b2, then b0 (seconds by site; `latency` overrides)."""
    seconds = {**BRANCH_LATENCY, **(latency or {})}
    text = "A draft about tides"
    return ScriptedModel(
        {
            "Draft about facts about tides": "A draft about tides",
            f"Branch for {text}": "branch text",
        },
        decisions={f"Judge: {text}": ["REVISE", "ACCEPT"]},
        usage=USAGE,
        latency=lambda request: seconds.get(request.site, 0.0),
    )


# -- document order: entry action, spawn, send to that child -----------------------------------

NOTIFIED: list[str] = []

order_machine = setup_agent(
    actors={"job": from_promise(lookup)},
    actions={"notify": lambda context, event, params: NOTIFIED.append("notify")},
).create_machine(
    {
        "id": "order",
        "initial": "start",
        "context": {"q": "x"},
        "states": {
            "start": {
                "entry": ["notify", spawn_child("job", id="job1", input={"q": "x"}), send_to("job1", {"type": "PING"})],
                "on": {"xstate.done.actor.job1": "end"},
            },
            "end": {"type": "final"},
        },
    }
)

# -- retries: errors count as completions ---------------------------------------------------------

retry_machine = setup_agent(actors={"job": from_promise(lookup)}).create_machine(
    {
        "id": "retry",
        "initial": "working",
        "context": {"q": "r", "attempts": 0},
        "states": {
            "working": {
                "invoke": {
                    "src": "job",
                    "id": "job",
                    "input": lambda context, event, params: {"q": context["q"]},
                    "onDone": "done",
                    "onError": {"target": "working", "reenter": True,
                                "actions": assign({"attempts": lambda c, e, p: c["attempts"] + 1})},
                }
            },
            "done": {"type": "final"},
        },
    }
)

# -- a host-approval machine (resume with an event off the wire) ---------------------------------

approval_machine = setup_agent(
    schemas={"APPROVE": ApproveEvent},
    actors={"draft": create_text_logic(prompt=lambda context, event: f"Reply to {context['q']}")},
).create_machine(
    {
        "id": "approval",
        "version": "1",
        "context": lambda input: {"q": (input or {}).get("q", "?"), "text": None, "note": None},
        "initial": "drafting",
        "states": {
            "drafting": {
                "invoke": {
                    "src": "draft",
                    "id": "draft",
                    "onDone": {"target": "review", "actions": assign({"text": lambda c, e, p: e["output"]["text"]})},
                    "onError": "failed",
                }
            },
            "review": {
                "on": {
                    "APPROVE": {"target": "approved", "actions": assign({"note": lambda c, e, p: e.get("note")})},
                    "REJECT": "drafting",
                }
            },
            "approved": {"type": "final"},
            "failed": {"type": "final"},
        },
        "output": lambda context, event, params: {"text": context["text"], "note": context["note"]},
    }
)

# -- plans ------------------------------------------------------------------------------------

plan_machine = setup_agent(
    actors={"planner": create_plan_logic(prompt="Plan the count", events=["ADD", "SUB"], max_steps=3, stop_on=["HALT"])},
).create_machine(
    {
        "id": "plan",
        "initial": "planning",
        "context": {"count": 0},
        "states": {
            "planning": {
                "invoke": {"src": "planner", "id": "planner", "onDone": {"target": "done",
                           "actions": assign({"result": lambda c, e, p: e["output"]})}},
                "on": {
                    "ADD": {"actions": assign({"count": lambda c, e, p: c["count"] + 1})},
                    "SUB": {"actions": assign({"count": lambda c, e, p: c["count"] - 1})},
                    "HALT": {"actions": assign({"halted": True})},
                },
            },
            "done": {"type": "final"},
        },
        "output": lambda context, event, params: context,
    }
)

# -- a delayed raise that a later event cancels ------------------------------------------------

timer_machine = setup_agent().create_machine(
    {
        "id": "timer",
        "initial": "waiting",
        "states": {
            "waiting": {"after": {500: "expired"}, "on": {"GO": "going"}},
            "expired": {"type": "final"},
            "going": {"entry": raise_({"type": "TICK"}, delay=200, id="tick"), "on": {"TICK": "ticked"}},
            "ticked": {"type": "final"},
        },
    }
)

# -- version 2 of the approval machine: `note` became `notes` (a list) -------------------------


def _migrate(snapshot: dict[str, Any], from_version: Any) -> dict[str, Any]:
    if from_version != "1":
        return snapshot
    context = dict(snapshot["context"])
    note = context.pop("note", None)
    context["notes"] = [] if note is None else [note]
    return {**snapshot, "context": context}


approval_machine_v2 = setup_agent(
    actors={"draft": create_text_logic(prompt=lambda context, event: f"Reply to {context['q']}", mode="stream")},
).create_machine(
    {
        "id": "approval",
        "version": "2",
        "migrate": _migrate,
        "context": lambda input: {"q": (input or {}).get("q", "?"), "text": None, "notes": []},
        "initial": "drafting",
        "states": {
            "drafting": {
                "invoke": {
                    "src": "draft",
                    "id": "draft",
                    "onDone": {"target": "review", "actions": assign({"text": lambda c, e, p: e["output"]["text"]})},
                    "onError": "failed",
                }
            },
            "review": {
                "on": {
                    "APPROVE": {"target": "approved",
                                "actions": assign({"notes": lambda c, e, p: [*c["notes"], e.get("note")]})},
                    "REJECT": "drafting",
                }
            },
            "approved": {"type": "final"},
            "failed": {"type": "final"},
        },
        "output": lambda context, event, params: {"text": context["text"], "notes": context["notes"]},
    }
)


async def _unjsonable(input: Any) -> Any:
    return {"when": object()}


odd_task_machine = setup_agent(actors={"odd": from_promise(_unjsonable)}).create_machine(
    {
        "id": "odd",
        "initial": "running",
        "states": {
            "running": {"invoke": {"src": "odd", "id": "odd", "onDone": "ok", "onError": "failed"}},
            "ok": {"type": "final"},
            "failed": {"type": "final"},
        },
    }
)


async def _slow(input: Any) -> str:
    await asyncio.sleep(0.05)
    return "slow"


race_machine = setup_agent(actors={"slow": from_promise(_slow)}).create_machine(
    {
        "id": "race",
        "initial": "waiting",
        "states": {
            "waiting": {
                "invoke": {"src": "slow", "id": "slow", "onDone": "finished"},
                "after": {5: "timedOut"},
            },
            "finished": {"type": "final"},
            "timedOut": {"type": "final"},
        },
    }
)

# -- an initial state JSON cannot hold (a set in context) ----------------------------------------

unjsonable_machine = setup_agent(
    actors={"draft": create_text_logic(prompt="say hi")},
).create_machine(
    {
        "id": "unjsonable",
        "context": lambda input: {"tags": {"a", "b"}},
        "initial": "drafting",
        "states": {
            "drafting": {"invoke": {"src": "draft", "id": "draft", "onDone": "done"}},
            "done": {"type": "final"},
        },
    }
)

# -- a decision over events that carry a schema --------------------------------------------------

review_machine = setup_agent(
    schemas={"APPROVE": ApproveEvent},
    actors={"reviewer": create_decision_logic(prompt="Review it")},
).create_machine(
    {
        "id": "review",
        "initial": "reviewing",
        "context": {"score": None},
        "states": {
            "reviewing": {
                "invoke": {"src": "reviewer", "id": "reviewer"},
                "on": {
                    "APPROVE": {"target": "approved", "actions": assign({"score": lambda c, e, p: e["score"]})},
                    "REJECT": "rejected",
                },
            },
            "approved": {"type": "final"},
            "rejected": {"type": "final"},
        },
        "output": lambda context, event, params: context,
    }
)
