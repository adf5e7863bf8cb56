"""The planner agent: a model-made plan of moves, each a legal machine event (docs/semantics/step-path.md "Plans").

Scenario: a traveller asks for a weekend trip within a budget. The agent invokes a *plan*: at every frontier the
model picks one of `BOOK_FLIGHT`, `BOOK_HOTEL`, `ADD_ACTIVITY` (with its details and cost), the machine applies it,
and the plan re-surfaces with the updated state, until the model says `agent.plan.done`, the traveller's
`CANCEL_TRIP` stops it, or six steps are spent. The `withinBudget` guard refuses a booking that would overrun the
budget; the runtime then asks the model again, telling it what was refused (a retried decision). Each applied move
is journaled as the bare machine event, the plan's completion as `xstate.done.actor.plan` carrying
`{steps, stopped}`; then a model writes the itinerary.

Context is JSON only (costs in integer cents); guards and assigns are pure functions of (context, event).
"""

from __future__ import annotations

from typing import Any

from ..engine import assign
from ..runtime import create_plan_logic, create_text_logic, setup_agent

__all__ = ["PLANNER_MODEL", "PLAN_EVENTS", "planner_agent"]

PLANNER_MODEL = "scripted/large"
PLAN_EVENTS = ("BOOK_FLIGHT", "BOOK_HOTEL", "ADD_ACTIVITY")


def _plan_prompt(context: dict[str, Any], event: Any) -> str:
    trip = context["trip"]
    return (
        f"Plan a weekend in {trip['destination']} for {trip['travellers']} within "
        f"{context['budgetCents'] / 100:.2f} EUR. Book a flight, a hotel and activities, one move at a time."
    )


def _cost(event: dict[str, Any]) -> int:
    return int(event.get("costCents", 0))


def _within_budget(context: dict[str, Any], event: dict[str, Any], params: Any) -> bool:
    return bool(context["spentCents"] + _cost(event) <= context["budgetCents"])


def _book(kind: str) -> Any:
    def update(context: dict[str, Any], event: dict[str, Any], params: Any) -> dict[str, Any]:
        item = {"kind": kind, "what": event.get("what", kind), "costCents": _cost(event)}
        return {"itinerary": [*context["itinerary"], item], "spentCents": context["spentCents"] + _cost(event)}

    return update


def _itinerary_prompt(context: dict[str, Any], event: Any) -> str:
    lines = "\n".join(f"- {item['kind']}: {item['what']} ({item['costCents'] / 100:.2f} EUR)" for item in context["itinerary"])
    return f"Write a short itinerary for {context['trip']['destination']}:\n{lines}"


_agent = setup_agent(
    actors={
        "plan": create_plan_logic(
            prompt=_plan_prompt, events=PLAN_EVENTS, max_steps=6, stop_on=["CANCEL_TRIP"], model=PLANNER_MODEL
        ),
        "writeItinerary": create_text_logic(prompt=_itinerary_prompt, model=PLANNER_MODEL),
    },
    guards={"withinBudget": _within_budget},
)

planner_agent = _agent.create_machine(
    {
        "id": "planner",
        "version": "1",
        "description": "Books a trip move by move with a model-made plan, within a budget.",
        "context": lambda input: {
            "trip": dict((input or {}).get("trip") or {}),
            "budgetCents": int((input or {}).get("budgetCents", 0)),
            "spentCents": 0,
            "itinerary": [],
            "plan": None,
            "summary": None,
        },
        "initial": "planning",
        "states": {
            "planning": {
                "invoke": {
                    "src": "plan",
                    "id": "plan",
                    "onDone": {"target": "writing", "actions": assign({"plan": lambda c, e, p: e["output"]})},
                },
                "on": {
                    "BOOK_FLIGHT": {"guard": "withinBudget", "actions": assign(_book("flight"))},
                    "BOOK_HOTEL": {"guard": "withinBudget", "actions": assign(_book("hotel"))},
                    "ADD_ACTIVITY": {"guard": "withinBudget", "actions": assign(_book("activity"))},
                    "CANCEL_TRIP": "cancelled",
                },
            },
            "writing": {
                "invoke": {
                    "src": "writeItinerary",
                    "id": "writeItinerary",
                    "onDone": {"target": "planned", "actions": assign({"summary": lambda c, e, p: e["output"]["text"]})},
                }
            },
            "planned": {"type": "final"},
            "cancelled": {"type": "final"},
        },
        "output": lambda c, e, p: {"itinerary": c["itinerary"], "spentCents": c["spentCents"], "summary": c["summary"]},
    }
)
