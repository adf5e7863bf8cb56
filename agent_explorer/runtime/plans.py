"""Plans (docs/semantics/step-path.md "Plans"): one step of an ordered sequence of decisions, per frontier.

A plan effect re-surfaces on every frontier while its invoke lives, with its candidates recomputed
from the live snapshot and its applied trail derived from the journal (the events caused by the
plan's request id). A step either applies one more legal event or completes the plan with
`{steps, stopped}`: on the reserved `agent.plan.done` move, after a `stop_on` event, when
`max_steps` is spent, or when no candidate is legal. Never journals and never transitions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .decisions import PLAN_DONE_EVENT_TYPE, resolve_decision_detailed
from .executors import AgentRequest, ChoiceResult

__all__ = ["PLAN_STOP_REASONS", "PlanStep", "plan_step"]

PLAN_STOP_REASONS = ("done", "stop-on", "max-steps", "no-legal-events")


@dataclass(frozen=True)
class PlanStep:
    """The step's result: `event` to apply next, or (when `completed`) the plan's output
    `{steps, stopped}` for its `xstate.done.actor.<id>`; `answers` are the model's replies."""

    event: dict[str, Any] | None
    completed: dict[str, Any] | None
    answers: tuple[ChoiceResult, ...] = ()


def _completed(request: AgentRequest, stopped: str, answers: tuple[ChoiceResult, ...] = ()) -> PlanStep:
    return PlanStep(None, {"steps": [dict(e) for e in request.applied], "stopped": stopped}, answers)


async def plan_step(
    request: AgentRequest,
    decide: Callable[[AgentRequest], Any],
    *,
    can_take: Callable[[dict[str, Any]], bool] | None = None,
    validate: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    max_attempts: int = 3,
) -> PlanStep:
    """Resolve one frontier of a plan; the model is asked only when the plan can go on."""
    applied = request.applied
    if applied and applied[-1].get("type") in request.stop_on:
        return _completed(request, "stop-on")
    if request.max_steps is not None and len(applied) >= request.max_steps:
        return _completed(request, "max-steps")
    if not [t for t in request.events if can_take is None or can_take({"type": t})]:
        return _completed(request, "no-legal-events")
    candidates = tuple(dict.fromkeys([*request.events, *request.stop_on, PLAN_DONE_EVENT_TYPE]))
    event, answers = await resolve_decision_detailed(
        dataclasses.replace(request, events=candidates),
        decide,
        can_take=can_take,
        max_attempts=max_attempts,
        validate=validate,
    )
    if event["type"] == PLAN_DONE_EVENT_TYPE:
        return _completed(request, "done", tuple(answers))
    return PlanStep(event, None, tuple(answers))
