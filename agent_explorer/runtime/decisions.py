"""`resolve_decision`: ask a model to pick one legal event, retrying choices the machine refuses.

A decision has no output of its own: the chosen machine event is what a host journals. This module
validates a choice against the request's candidate types and the host's `can_take` (wired to
`snapshot.can`, so guards decide), and feeds rejected choices back on retry. It never journals,
never transitions a machine, and never reads a clock.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ..errors import AgentError, AgentInvalidEventPayloadError
from .executors import AgentRequest, ChoiceResult, maybe_await, normalize_choice_result

__all__ = ["DEFAULT_MAX_ATTEMPTS", "PLAN_DONE_EVENT_TYPE", "resolve_decision", "resolve_decision_detailed"]

#: The reserved move that ends a plan (docs/semantics/step-path.md "Plans").
PLAN_DONE_EVENT_TYPE = "agent.plan.done"
DEFAULT_MAX_ATTEMPTS = 3


async def resolve_decision_detailed(
    request: AgentRequest,
    decide: Callable[[AgentRequest], Any],
    *,
    can_take: Callable[[dict[str, Any]], bool] | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    validate: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> tuple[dict[str, Any], list[ChoiceResult]]:
    """Like `resolve_decision`, also returning every model answer (for usage journaling)."""
    answers: list[ChoiceResult] = []
    rejected: list[dict[str, Any]] = []
    current = request
    for _ in range(max(1, max_attempts)):
        try:
            answer = normalize_choice_result(await maybe_await(decide(current)))
        except Exception as error:
            if answers and not hasattr(error, "answers"):
                error.answers = list(answers)  # type: ignore[attr-defined]  # the spend before the failure
            raise
        answers.append(answer)
        event = answer.event
        reason: str | None = None
        if request.events and event["type"] not in request.events:
            reason = f"not one of the legal events {list(request.events)}"
        elif event["type"] != PLAN_DONE_EVENT_TYPE and validate is not None:
            # Model output is untrusted input: the event schema applies as it does off the wire.
            try:
                event = validate(event)
            except AgentInvalidEventPayloadError as error:
                reason = f"its payload is invalid ({error.message})"
        if reason is None and event["type"] != PLAN_DONE_EVENT_TYPE and can_take is not None and not can_take(event):
            reason = "the machine cannot take it in this state (a guard refused it)"
        if reason is None:
            return event, answers
        rejected.append({"event": event, "reason": reason})
        current = dataclasses.replace(request, rejected=tuple(rejected))
    raise AgentError(
        f"Decision {request.request_id} got no acceptable choice in {len(answers)} attempts: "
        + "; ".join(f"{r['event'].get('type')!r} ({r['reason']})" for r in rejected)
        + ".",
        code="decision-rejected",
        request_id=request.request_id,
        rejected=rejected,
        answers=answers,
    )


async def resolve_decision(
    request: AgentRequest,
    decide: Callable[[AgentRequest], Any],
    *,
    can_take: Callable[[dict[str, Any]], bool] | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    validate: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Ask `decide` for one of `request.events`; return the first choice the machine can take.

    A choice outside the candidates, or one `can_take` refuses (wire it to `snapshot.can`), is
    rejected and `decide` is asked again with `request.rejected` listing what was refused, up to
    `max_attempts` times; then `AgentError` (code `decision-rejected`). `validate` (e.g.
    `lambda e: parse_agent_event(machine, e)`) parses the chosen event; a payload it refuses is
    rejected like a guard. `decide` may be sync or async and return an event type, an event dict,
    or `{"choice": ..., "usage": ...}`.
    """
    event, _ = await resolve_decision_detailed(
        request, decide, can_take=can_take, max_attempts=max_attempts, validate=validate
    )
    return event
