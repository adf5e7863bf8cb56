"""The machines the provider tests record: the sample support agent, and a triage agent that adds what the
support agent lacks (a streamed reply, a system + messages prompt with options, a decision whose event
has a schema and a guard, a plan, and `onError` on every model call)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from agent_explorer import assign, from_promise
from agent_explorer.runtime import create_decision_logic, create_plan_logic, create_text_logic, setup_agent

SUPPORT_INPUT = {
    "ticket": {
        "id": "T-1",
        "customer": "Ana",
        "subject": "Torn backpack",
        "body": "My backpack arrived torn.",
        "orderId": "A-5531",
    }
}
TRIAGE_INPUT = {"ticket": {"customer": "Bo", "text": "I was charged twice for March."}}
SUMMARY_MODEL = "summary-model"


class RefundEvent(BaseModel):
    """Refund part of the customer's payment."""

    type: Literal["REFUND"] = "REFUND"
    amountCents: int = Field(gt=0)
    reason: str = Field(min_length=1)


class TagEvent(BaseModel):
    """Tag the ticket."""

    type: Literal["ADD_TAG"] = "ADD_TAG"
    tag: str = Field(min_length=1)


async def fetch_account(input: Any) -> dict[str, Any]:
    return {"plan": "pro", "limitCents": 5000}


def _failed(c: dict[str, Any], e: dict[str, Any], p: Any) -> Any:
    return e["error"]


_agent = setup_agent(
    schemas={"REFUND": RefundEvent, "ADD_TAG": TagEvent},
    actors={
        "fetchAccount": from_promise(fetch_account),
        "summarize": create_text_logic(
            prompt=lambda c, e: {
                "system": "You summarise support tickets in one sentence.",
                "messages": [{"role": "user", "content": f"Summarise: {c['ticket']['text']}"}],
            },
            model=SUMMARY_MODEL,
            temperature=0.1,
            maxTokens=64,
        ),
        "reply": create_text_logic(prompt=lambda c, e: f"Write a reply about: {c['summary']}", mode="stream"),
        "choose": create_decision_logic(
            prompt=lambda c, e: f"Decide on the ticket: {c['summary']} (refund limit {c['account']['limitCents']} cents)",
            events=["REFUND", "ESCALATE"],
        ),
        "tag": create_plan_logic(prompt=lambda c, e: f"Tag the ticket: {c['summary']}", events=["ADD_TAG"], max_steps=3),
    },
    guards={"withinLimit": lambda c, e, p: e["amountCents"] <= c["account"]["limitCents"]},
)


def _model_call(src: str, next_state: str, key: str) -> dict[str, Any]:
    return {
        "invoke": {
            "src": src,
            "id": src,
            "onDone": {"target": next_state, "actions": assign({key: lambda c, e, p: e["output"]})},
            "onError": {"target": "failed", "actions": assign({"error": _failed})},
        }
    }


triage_agent = _agent.create_machine(
    {
        "id": "triage",
        "version": "1",
        "context": lambda input: {
            "ticket": dict((input or {}).get("ticket") or {}),
            "account": None, "summary": None, "reply": None, "refund": None, "escalated": False,
            "tags": [], "plan": None, "error": None,
        },
        "initial": "fetching",
        "states": {
            "fetching": _model_call("fetchAccount", "summarizing", "account"),
            "summarizing": {
                "invoke": {
                    "src": "summarize",
                    "id": "summarize",
                    "onDone": {"target": "replying", "actions": assign({"summary": lambda c, e, p: e["output"]["text"]})},
                    "onError": {"target": "failed", "actions": assign({"error": _failed})},
                }
            },
            "replying": _model_call("reply", "choosing", "reply"),
            "choosing": {
                "invoke": {"src": "choose", "id": "choose", "onError": {"target": "failed", "actions": assign({"error": _failed})}},
                "on": {
                    "REFUND": {"target": "tagging", "guard": "withinLimit", "actions": assign({"refund": lambda c, e, p: e})},
                    "ESCALATE": {"target": "tagging", "actions": assign({"escalated": True})},
                },
            },
            "tagging": {
                "invoke": {
                    "src": "tag",
                    "id": "tag",
                    "onDone": {"target": "done", "actions": assign({"plan": lambda c, e, p: e["output"]})},
                    "onError": {"target": "failed", "actions": assign({"error": _failed})},
                },
                "on": {"ADD_TAG": {"actions": assign({"tags": lambda c, e, p: [*c["tags"], e["tag"]]})}},
            },
            "done": {"type": "final"},
            "failed": {"type": "final"},
        },
        "output": lambda c, e, p: {
            "summary": c["summary"], "reply": c["reply"], "refund": c["refund"], "tags": c["tags"],
            "plan": c["plan"], "error": c["error"],
        },
    }
)
