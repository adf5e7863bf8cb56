"""The support-ticket agent: the sample a newcomer meets first (`agent-explorer open`).

Scenario: a customer writes in about an order. The agent looks the order up with a tool (a `from_promise`
task), asks a small model to classify the ticket, has a larger model draft a reply, and then lets the model
*decide* what to do: offer a refund, just reply, or escalate. A refund needs a person: the agent goes idle in
`awaitingApproval` until an `APPROVE` or `REJECT` event arrives off the wire (pydantic schemas below), and if
nobody answers within four hours an `after` timer escalates the ticket. An approved refund is issued by a second
tool task; a rejection sends the agent back to drafting with the reviewer's reason. Every model call journals an
`@agent.usage` record, billed to the model that answered.

The refund guard is the policy: a refund within `refund_limit_cents` (and not already rejected). Three machines
come out of the one builder:

- `support_agent` (version "1"): today's machine, refund limit 150.00.
- `support_agent_old_policy`: the same id and version "1", but a refund limit of 250.00. It is what the
  divergent sample log was recorded with: the guard's body changed and nobody bumped the version, the hazard
  docs/semantics/event-log.md "Hazards" warns about (a structural hash sees names, not function bodies).
- `support_agent_v2` (version "2", with `migrate`): approvals became a list (`approvals`), so a ticket can
  carry several reviews. `migrate` upgrades a version-1 snapshot; the version-bridge sample uses it.

Context is JSON only; guards, assigns and prompt builders are pure functions of (context, event). The two tools
answer from a fixed table, so a regenerated run is byte-identical.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..engine import assign, from_promise
from ..runtime import create_decision_logic, create_text_logic, setup_agent

__all__ = [
    "APPROVAL_TIMEOUT_MS",
    "LARGE_MODEL",
    "ORDERS",
    "SMALL_MODEL",
    "ApproveEvent",
    "RejectEvent",
    "build_support_agent",
    "migrate_support_snapshot",
    "support_agent",
    "support_agent_old_policy",
    "support_agent_v2",
]

SMALL_MODEL = "scripted/small"
LARGE_MODEL = "scripted/large"
APPROVAL_TIMEOUT_MS = 4 * 60 * 60 * 1000

#: The order database the lookup tool reads (amounts in cents: integers hash the same everywhere).
ORDERS: dict[str, dict[str, Any]] = {
    "A-5531": {"orderId": "A-5531", "item": "Trailhead 40L backpack", "amountCents": 8900, "status": "arrived torn"},
    "A-6120": {"orderId": "A-6120", "item": "Summit down jacket", "amountCents": 18900, "status": "wrong size sent"},
    "A-7007": {"orderId": "A-7007", "item": "Camp stove kit", "amountCents": 6450, "status": "arrived 9 days late"},
}


class ApproveEvent(BaseModel):
    """A reviewer approves the refund the agent offered (parsed at the wire with parse_agent_event)."""

    type: Literal["APPROVE"] = "APPROVE"
    approver: str = Field(min_length=1)
    note: str = ""


class RejectEvent(BaseModel):
    """A reviewer refuses the refund; the agent drafts again, told why."""

    type: Literal["REJECT"] = "REJECT"
    approver: str = Field(min_length=1)
    reason: str = Field(min_length=1)


# -- tools (host-run tasks: their results are journaled, so replay never calls them) -------------------


async def lookup_order(input: Mapping[str, Any]) -> dict[str, Any]:
    order = ORDERS.get(str(input["orderId"]))
    if order is None:
        raise LookupError(f"no order {input['orderId']!r}")
    return dict(order)


async def issue_refund(input: Mapping[str, Any]) -> dict[str, Any]:
    return {"refundId": f"RF-{input['orderId']}", "amountCents": input["amountCents"], "status": "issued"}


# -- prompts (pure functions of context and event) --------------------------------------------------------


def _classify_prompt(context: dict[str, Any], event: Any) -> str:
    ticket = context["ticket"]
    return (
        "Classify this support ticket as one of: billing, shipping, product, account.\n"
        f"Subject: {ticket['subject']}\n{ticket['body']}"
    )


def _rejections(context: dict[str, Any]) -> list[dict[str, Any]]:
    if "approvals" in context:  # version 2
        return [a for a in context["approvals"] if a["decision"] == "rejected"]
    approval = context.get("approval")
    return [approval] if approval and approval["decision"] == "rejected" else []


def _draft_prompt(context: dict[str, Any], event: Any) -> str:
    ticket, order = context["ticket"], context["order"]
    prompt = (
        f"Draft a reply to {ticket['customer']} about '{ticket['subject']}'. "
        f"Order {order['orderId']}: {order['item']}, {order['status']}. Category: {context['category']}."
    )
    for rejection in _rejections(context):
        prompt += f" A reviewer rejected a refund ({rejection['reason']}); do not offer one."
    return prompt


def _decide_prompt(context: dict[str, Any], event: Any) -> str:
    return (
        f"Ticket category: {context['category']}. Draft reply: {context['draft']}\n"
        "Choose the next step: OFFER_REFUND (a person must approve it), SEND_REPLY, or ESCALATE."
    )


def _final_prompt(context: dict[str, Any], event: Any) -> str:
    refund = context["refund"]
    refund_text = f"refund {refund['refundId']} issued" if refund else "no refund"
    return f"Write the final reply to {context['ticket']['customer']} ({refund_text}). Draft: {context['draft']}"


# -- the machine ---------------------------------------------------------------------------------------------


def _context(input: Any) -> dict[str, Any]:
    ticket = dict((input or {}).get("ticket") or {})
    return {
        "ticket": ticket,
        "order": None,
        "category": None,
        "draft": None,
        "approval": None,
        "refund": None,
        "reply": None,
        "escalation": None,
    }


def _context_v2(input: Any) -> dict[str, Any]:
    context = _context(input)
    del context["approval"]
    context["approvals"] = []
    return context


def _refund_guard(limit_cents: int) -> Any:
    def refund_within_policy(context: dict[str, Any], event: Any, params: Any) -> bool:
        order = context["order"] or {}
        return int(order.get("amountCents", 0)) <= limit_cents and not _rejections(context)

    return refund_within_policy


def _review(decision: str) -> Any:
    def review(context: dict[str, Any], event: dict[str, Any], params: Any) -> dict[str, Any]:
        return {
            "decision": decision,
            "approver": event.get("approver"),
            "note": event.get("note", ""),
            "reason": event.get("reason"),
        }

    return review


def _record_review(version: str, decision: str) -> Any:
    review = _review(decision)
    if version == "1":
        return assign({"approval": review})
    return assign({"approvals": lambda c, e, p: [*c["approvals"], review(c, e, p)]})


def _escalate(reason: str) -> Any:
    return assign({"escalation": reason})


def _output(context: dict[str, Any], event: Any, params: Any) -> dict[str, Any]:
    if context["escalation"] is not None:
        return {"resolution": "escalated", "reason": context["escalation"]}
    return {"resolution": "resolved", "reply": context["reply"], "refund": context["refund"]}


def migrate_support_snapshot(snapshot: dict[str, Any], from_version: Any) -> dict[str, Any]:
    """Version 1 -> 2: the single `approval` becomes the list `approvals` (empty when there was none)."""
    if from_version != "1":
        return snapshot
    context = dict(snapshot["context"])
    approval = context.pop("approval", None)
    context["approvals"] = [] if approval is None else [approval]
    return {**snapshot, "context": context}


def build_support_agent(*, version: str = "1", refund_limit_cents: int = 15000) -> Any:
    """The support agent at `version` ("1" or "2") with the refund policy `refund_limit_cents`."""
    agent = setup_agent(
        schemas={"APPROVE": ApproveEvent, "REJECT": RejectEvent},
        actors={
            "lookupOrder": from_promise(lookup_order),
            "issueRefund": from_promise(issue_refund),
            "classify": create_text_logic(prompt=_classify_prompt, model=SMALL_MODEL),
            "draft": create_text_logic(prompt=_draft_prompt, model=LARGE_MODEL),
            "chooseAction": create_decision_logic(
                prompt=_decide_prompt, events=["OFFER_REFUND", "SEND_REPLY", "ESCALATE"], model=LARGE_MODEL
            ),
            "finalReply": create_text_logic(prompt=_final_prompt, model=LARGE_MODEL),
        },
        guards={"refundWithinPolicy": _refund_guard(refund_limit_cents)},
        delays={"approvalTimeout": APPROVAL_TIMEOUT_MS},
    )
    config: dict[str, Any] = {
        "id": "support",
        "version": version,
        "description": "Answers a support ticket; refunds need a person's approval.",
        "context": _context if version == "1" else _context_v2,
        "initial": "lookingUpOrder",
        "states": {
            "lookingUpOrder": {
                "invoke": {
                    "src": "lookupOrder",
                    "id": "lookupOrder",
                    "input": lambda c, e, p: {"orderId": c["ticket"]["orderId"]},
                    "onDone": {"target": "triaging", "actions": assign({"order": lambda c, e, p: e["output"]})},
                    "onError": {"target": "escalated", "actions": _escalate("order lookup failed")},
                }
            },
            "triaging": {
                "invoke": {
                    "src": "classify",
                    "id": "classify",
                    "onDone": {
                        "target": "drafting",
                        "actions": assign({"category": lambda c, e, p: e["output"]["text"].strip().lower()}),
                    },
                }
            },
            "drafting": {
                "invoke": {
                    "src": "draft",
                    "id": "draft",
                    "onDone": {"target": "deciding", "actions": assign({"draft": lambda c, e, p: e["output"]["text"]})},
                }
            },
            "deciding": {
                "invoke": {"src": "chooseAction", "id": "chooseAction"},
                "on": {
                    "OFFER_REFUND": {"target": "awaitingApproval", "guard": "refundWithinPolicy"},
                    "SEND_REPLY": "replying",
                    "ESCALATE": {"target": "escalated", "actions": _escalate("the model escalated")},
                },
            },
            "awaitingApproval": {
                "tags": ["waiting-for-human"],
                "description": "Idle until a reviewer sends APPROVE or REJECT; escalates after four hours.",
                "after": {
                    "approvalTimeout": {"target": "escalated", "actions": _escalate("no approval within 4 hours")}
                },
                "on": {
                    "APPROVE": {"target": "refunding", "actions": _record_review(version, "approved")},
                    "REJECT": {"target": "drafting", "actions": _record_review(version, "rejected")},
                },
            },
            "refunding": {
                "invoke": {
                    "src": "issueRefund",
                    "id": "issueRefund",
                    "input": lambda c, e, p: {
                        "orderId": c["order"]["orderId"],
                        "amountCents": c["order"]["amountCents"],
                    },
                    "onDone": {"target": "replying", "actions": assign({"refund": lambda c, e, p: e["output"]})},
                    "onError": {"target": "escalated", "actions": _escalate("the refund failed")},
                }
            },
            "replying": {
                "invoke": {
                    "src": "finalReply",
                    "id": "finalReply",
                    "onDone": {"target": "resolved", "actions": assign({"reply": lambda c, e, p: e["output"]["text"]})},
                }
            },
            "resolved": {"type": "final"},
            "escalated": {"type": "final"},
        },
        "output": _output,
    }
    if version != "1":
        config["migrate"] = migrate_support_snapshot
    return agent.create_machine(config)


support_agent = build_support_agent()
support_agent_old_policy = build_support_agent(refund_limit_cents=25000)
support_agent_v2 = build_support_agent(version="2")
