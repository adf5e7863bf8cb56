"""The inbox agent: a triage loop that runs all day, the machine behind the 100,000-entry sample.

Scenario: tickets arrive one by one (`TICKET`, a host event). For each, a small model names its queue (text) and
a decision routes it (`ROUTE_BILLING`, `ROUTE_SHIPPING`, `ROUTE_PRODUCT`), then the agent waits for the next one.
Five entries per ticket (the ticket, the classification, its usage, the route, its usage) add up quickly: a
day's worth makes the long sample log you scrub to feel how the explorer's checkpoints scale.

`inbox_ticket(n)` and `inbox_answers(n)` script the n-th ticket and what the models answer, as pure functions of
n, so the long run regenerates identically (and so `long_run.py` can write it without a model). Context is
small and JSON only: counters, not history, so the state hash stays cheap however long the run.
"""

from __future__ import annotations

from typing import Any

from ..engine import assign
from ..runtime import create_decision_logic, create_text_logic, setup_agent

__all__ = [
    "INBOX_ROUTER_MODEL",
    "INBOX_SMALL_MODEL",
    "QUEUES",
    "inbox_agent",
    "inbox_answers",
    "inbox_ticket",
    "ticket_gap_seconds",
]

INBOX_SMALL_MODEL = "scripted/small"
INBOX_ROUTER_MODEL = "scripted/large"
QUEUES = ("billing", "shipping", "product")

_SUBJECTS = (
    ("Charged twice for one order", "billing"),
    ("Where is my parcel?", "shipping"),
    ("Zip broke after a week", "product"),
    ("Invoice shows the wrong address", "billing"),
    ("Tracking has not moved in 5 days", "shipping"),
    ("Tent pole cracked on first use", "product"),
    ("Refund has not arrived", "billing"),
)


def inbox_ticket(n: int) -> dict[str, Any]:
    """The n-th (1-based) ticket event: a pure function of n."""
    subject, _ = _SUBJECTS[(n * 5 + n // 7) % len(_SUBJECTS)]
    return {"type": "TICKET", "ticketId": f"T-{100000 + n}", "subject": subject}


def inbox_answers(n: int) -> tuple[str, str]:
    """What the models answer for ticket n: (the classification text, the routing event type)."""
    _, queue = _SUBJECTS[(n * 5 + n // 7) % len(_SUBJECTS)]
    return queue, f"ROUTE_{queue.upper()}"


def ticket_gap_seconds(n: int) -> int:
    """Seconds between ticket n-1 and ticket n (a busy, uneven inbox)."""
    return 20 + (n * 37) % 90


def classify_prompt(context: dict[str, Any], event: Any) -> str:
    return f"Which queue (billing, shipping, product) handles: {context['current']['subject']}?"


def route_prompt(context: dict[str, Any], event: Any) -> str:
    return f"Route ticket {context['current']['ticketId']} (classified {context['category']})."


def _routed(queue: str) -> Any:
    def update(context: dict[str, Any], event: Any, params: Any) -> dict[str, Any]:
        return {
            "queues": {**context["queues"], queue: context["queues"][queue] + 1},
            "handled": context["handled"] + 1,
            "current": None,
        }

    return update


_agent = setup_agent(
    actors={
        "classify": create_text_logic(prompt=classify_prompt, model=INBOX_SMALL_MODEL),
        "route": create_decision_logic(
            prompt=route_prompt, events=[f"ROUTE_{q.upper()}" for q in QUEUES], model=INBOX_ROUTER_MODEL
        ),
    },
)

inbox_agent = _agent.create_machine(
    {
        "id": "inbox",
        "version": "1",
        "description": "Classifies and routes every incoming ticket, forever.",
        "context": {"handled": 0, "queues": {q: 0 for q in QUEUES}, "current": None, "category": None},
        "initial": "waiting",
        "states": {
            "waiting": {
                "on": {
                    "TICKET": {
                        "target": "classifying",
                        "actions": assign(
                            {"current": lambda c, e, p: {"ticketId": e["ticketId"], "subject": e["subject"]}}
                        ),
                    }
                }
            },
            "classifying": {
                "invoke": {
                    "src": "classify",
                    "id": "classify",
                    "onDone": {"target": "routing", "actions": assign({"category": lambda c, e, p: e["output"]["text"]})},
                }
            },
            "routing": {
                "invoke": {"src": "route", "id": "route"},
                "on": {f"ROUTE_{q.upper()}": {"target": "waiting", "actions": assign(_routed(q))} for q in QUEUES},
            },
        },
    }
)
