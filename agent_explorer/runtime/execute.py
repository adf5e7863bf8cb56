"""Resolving one owed effect into the event to journal: the single primitive both hosts use.

`perform_effect` runs a text / decision / plan-step / task / delay effect against the executors
and returns what to journal: the completion (or chosen) event with its causation id, plus the
`@agent.usage` records of every model call it made. `run_agent` and a step-path host call the same
function, so both produce the same log. Never journals, never transitions a machine; the only
side effects are the executor/task calls (and a sleep for a host-run timer).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..canonical.strict import assert_json_serializable
from ..errors import AgentError
from .decisions import DEFAULT_MAX_ATTEMPTS, resolve_decision_detailed
from .effects import AgentEffect
from .executors import AgentRequest, ChoiceResult, TextResult, collect_stream, maybe_await, normalize_text_result
from .plans import plan_step

__all__ = ["Outcome", "execute_agent_request", "perform_effect", "usage_event"]


@dataclass
class Outcome:
    """What one effect resolved to: `event` to journal (None: nothing) and its `causation_id`,
    `usage` events (`@agent.usage`) for the model calls made, and `output` for the step path."""

    event: dict[str, Any] | None
    causation_id: str | None
    usage: list[dict[str, Any]] = field(default_factory=list)
    output: Any = None
    error: BaseException | None = None


def usage_event(request_id: str, model: str | None, usage: dict[str, Any]) -> dict[str, Any]:
    """An `@agent.usage` event (docs/api.md §2: `requestId`, `model`, `usage`)."""
    return {"type": "@agent.usage", "requestId": request_id, "model": model or "unknown", "usage": dict(usage)}


def _require(executors: Any, name: str, effect: AgentEffect) -> Callable[..., Any]:
    method = getattr(executors, name, None) if executors is not None else None
    if method is None:
        raise AgentError(
            f"Effect {effect.request_id} ({effect.kind}) needs an executor with {name}(); "
            "pass executors= (a ScriptedModel, or an object/dict implementing the protocol).",
            code="missing-executor",
            request_id=effect.request_id,
        )
    return method  # type: ignore[no-any-return]


async def _text(request: AgentRequest, call: Callable[..., Any], on_chunk: Callable[[str], Any] | None) -> TextResult:
    if request.mode == "stream":
        return await collect_stream(call(request), on_chunk)
    return normalize_text_result(await maybe_await(call(request)))


def _usage_of(request: AgentRequest, answers: Iterable[ChoiceResult]) -> list[dict[str, Any]]:
    """One `@agent.usage` event per model answer that reported usage."""
    return [usage_event(request.request_id, a.model or request.model, a.usage) for a in answers if a.usage]


async def _task(effect: AgentEffect) -> Any:
    assert effect.request is not None
    return await maybe_await(effect.logic.fn(input=effect.request.input))


async def _plan(
    effect: AgentEffect,
    request: AgentRequest,
    decide: Callable[..., Any],
    can_take: Callable[[dict[str, Any]], bool] | None,
    validate: Callable[[dict[str, Any]], dict[str, Any]] | None,
) -> Outcome:
    step = await plan_step(
        request,
        decide,
        can_take=can_take,
        validate=validate,
        max_attempts=getattr(effect.logic, "max_attempts", DEFAULT_MAX_ATTEMPTS),
    )
    usage = _usage_of(request, step.answers)
    if step.completed is not None:
        return Outcome(effect.to_done_event(step.completed), request.request_id, usage, output=step.completed)
    return Outcome(step.event, request.request_id, usage, output=step.event)


async def perform_effect(
    effect: AgentEffect,
    executors: Any,
    *,
    can_take: Callable[[dict[str, Any]], bool] | None = None,
    on_chunk: Callable[[str], Any] | None = None,
    time_scale: float = 1.0,
    validate: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> Outcome:
    """Resolve one effect. Failures of the call become the `xstate.error.actor.<id>` completion
    (errors count as completions); cancellation propagates. `execute` effects run inline."""
    if effect.kind == "execute":
        effect.exec()
        return Outcome(None, None)
    if effect.kind == "delay":
        await asyncio.sleep(max(0.0, float(effect.delay or 0)) / 1000.0 * time_scale)
        return Outcome(dict(effect.event or {}), effect.request_id)
    request = effect.request
    assert request is not None
    # A missing executor is the host's configuration, not the actor's failure: raise, journal nothing.
    call: Any = None  # the executor method a text / decision / plan effect calls
    if effect.kind == "text":
        call = _require(executors, "stream_text" if request.mode == "stream" else "generate_text", effect)
    elif effect.kind in ("decision", "plan"):
        call = _require(executors, "decide", effect)
    elif getattr(effect.logic, "fn", None) is None:
        raise AgentError(
            f"Task {effect.request_id} has no runnable logic (src {request.src!r}); register it with "
            "from_promise(async_fn).",
            code="missing-executor",
            request_id=effect.request_id,
        )
    try:
        if effect.kind == "text":
            result = await _text(request, call, on_chunk)
            output: dict[str, Any] = {"text": result.text}
            if result.finish_reason is not None:
                # An executor that reports why the model stopped also says which model answered.
                output["finishReason"] = result.finish_reason
                output["model"] = result.model or request.model
            usage = [usage_event(request.request_id, result.model or request.model, result.usage)] if result.usage else []
            return Outcome(effect.to_done_event(output), request.request_id, usage, output=output)
        if effect.kind == "decision":
            event, answers = await resolve_decision_detailed(
                request,
                call,
                can_take=can_take,
                max_attempts=getattr(effect.logic, "max_attempts", DEFAULT_MAX_ATTEMPTS),
                validate=validate,
            )
            return Outcome(event, request.request_id, _usage_of(request, answers), output=event)
        if effect.kind == "plan":
            return await _plan(effect, request, call, can_take, validate)
        output = await _task(effect)
        # The output is journaled inline: a value JSON cannot hold fails the task, not the run.
        assert_json_serializable(output, "output")
        return Outcome(effect.to_done_event(output), request.request_id, output=output)
    except asyncio.CancelledError:
        raise
    except Exception as error:  # noqa: BLE001 - the call failed: journal the actor's error completion
        # Attempts answered before the failure (a decision re-asked, then refused or failed) were
        # billed all the same: their usage is journaled with the error completion.
        spent = _usage_of(request, getattr(error, "answers", None) or ())
        return Outcome(effect.to_error_event(error), request.request_id, spent, error=error)


async def execute_agent_request(
    effect: AgentEffect,
    executors: Any,
    *,
    can_take: Callable[[dict[str, Any]], bool] | None = None,
    on_chunk: Callable[[str], Any] | None = None,
    validate: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> Any:
    """Run a text / task / decision effect and return its output (docs/semantics/step-path.md "Effect kinds").

    A text effect dispatches on its `mode` to `generate_text` or `stream_text` and returns
    `{"text": ...}`; a task returns its promise's result; a decision returns the chosen event.
    Errors raise, so the host can journal `effect.to_error_event(error)`.
    """
    outcome = await perform_effect(effect, executors, can_take=can_take, on_chunk=on_chunk, validate=validate)
    if outcome.error is not None:
        raise outcome.error
    return outcome.output
