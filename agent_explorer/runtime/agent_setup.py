"""Agent machines: `setup_agent` (the engine's `setup` plus event schemas) and the agent actor kinds.

The kinds are plain logic objects the pure engine records like any other actor source; their
`kind` attribute ("text" | "decision" | "plan") tells the runtime how to lower an invoke or spawn
into an effect. Prompt builders are pure functions of (context, event). Nothing here runs a model,
touches a log, or reads a clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..engine import setup
from ..errors import AgentError
from .parse import RESERVED_PREFIXES

__all__ = [
    "AGENT_KINDS",
    "DecisionLogic",
    "PlanLogic",
    "TextLogic",
    "create_decision_logic",
    "create_plan_logic",
    "create_text_logic",
    "logic_kind",
    "setup_agent",
]

AGENT_KINDS = ("text", "decision", "plan")
PromptBuilder = Callable[[Any, Any], Any]


def _build_prompt(prompt: PromptBuilder | str | None, context: Any, event: Any, input: Any) -> Any:
    """A prompt from the builder, a fixed string, or (no builder) the invoke's `input["prompt"]`."""
    if callable(prompt):
        return prompt(context, event)
    if prompt is not None:
        return prompt
    if isinstance(input, Mapping) and "prompt" in input:
        return input["prompt"]
    return input


@dataclass(frozen=True, eq=False)
class TextLogic:
    """Text generation: `prompt(context, event) -> str | messages`; the output is `{"text": ...}`.

    `mode="stream"` makes the runtime call the executor's `stream_text` (chunks live-only).
    """

    prompt: PromptBuilder | str | None = None
    mode: Literal["generate", "stream"] = "generate"
    model: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    kind: str = field(default="text", init=False)

    def build_prompt(self, context: Any, event: Any, input: Any = None) -> Any:
        return _build_prompt(self.prompt, context, event, input)


@dataclass(frozen=True, eq=False)
class DecisionLogic:
    """The model picks one of the machine's legal events in the invoking state.

    `events` restricts the candidates (default: every event type the invoking state and its
    ancestors handle). The chosen event is journaled as-is; the decision has no output.
    """

    prompt: PromptBuilder | str | None = None
    events: tuple[str, ...] | None = None
    model: str | None = None
    max_attempts: int = 3
    options: Mapping[str, Any] = field(default_factory=dict)
    kind: str = field(default="decision", init=False)

    def build_prompt(self, context: Any, event: Any, input: Any = None) -> Any:
        return _build_prompt(self.prompt, context, event, input)


@dataclass(frozen=True, eq=False)
class PlanLogic:
    """An ordered sequence of decisions (docs/semantics/step-path.md "Plans"), ended by `agent.plan.done`, a
    `stop_on` event, `max_steps`, or no legal events; completes with `{steps, stopped}`."""

    prompt: PromptBuilder | str | None = None
    events: tuple[str, ...] | None = None
    max_steps: int = 10
    stop_on: tuple[str, ...] = ()
    model: str | None = None
    max_attempts: int = 3
    options: Mapping[str, Any] = field(default_factory=dict)
    kind: str = field(default="plan", init=False)

    def build_prompt(self, context: Any, event: Any, input: Any = None) -> Any:
        return _build_prompt(self.prompt, context, event, input)


def _check_mode(mode: str) -> None:
    if mode not in ("generate", "stream"):
        raise AgentError(
            f"create_text_logic(mode={mode!r}): mode must be 'generate' or 'stream'.", code="invalid-argument"
        )


def create_text_logic(
    prompt: PromptBuilder | str | None = None,
    *,
    mode: Literal["generate", "stream"] = "generate",
    model: str | None = None,
    **options: Any,
) -> TextLogic:
    """Actor logic for a text request; `prompt` is `fn(context, event) -> str | messages`."""
    _check_mode(mode)
    return TextLogic(prompt=prompt, mode=mode, model=model, options=dict(options))


def _event_types(events: Iterable[str] | None, what: str) -> tuple[str, ...] | None:
    if events is None:
        return None
    types = tuple(events)
    if not all(isinstance(t, str) and t for t in types):
        raise AgentError(f"{what}: events must be non-empty event type strings, got {types!r}.", code="invalid-argument")
    return types


def create_decision_logic(
    prompt: PromptBuilder | str | None = None,
    *,
    events: Iterable[str] | None = None,
    model: str | None = None,
    max_attempts: int = 3,
    **options: Any,
) -> DecisionLogic:
    """Actor logic for a decision: the model picks one legal event (guards re-checked, retried)."""
    return DecisionLogic(
        prompt=prompt,
        events=_event_types(events, "create_decision_logic"),
        model=model,
        max_attempts=max_attempts,
        options=dict(options),
    )


def create_plan_logic(
    prompt: PromptBuilder | str | None = None,
    *,
    events: Iterable[str] | None = None,
    max_steps: int = 10,
    stop_on: Iterable[str] = (),
    model: str | None = None,
    max_attempts: int = 3,
    **options: Any,
) -> PlanLogic:
    """Actor logic for a plan: decisions applied one per frontier until done (docs/semantics/step-path.md "Plans")."""
    if not isinstance(max_steps, int) or max_steps < 1:
        raise AgentError(f"create_plan_logic(max_steps={max_steps!r}) must be a positive int.", code="invalid-argument")
    return PlanLogic(
        prompt=prompt,
        events=_event_types(events, "create_plan_logic"),
        max_steps=max_steps,
        stop_on=_event_types(stop_on, "create_plan_logic") or (),
        model=model,
        max_attempts=max_attempts,
        options=dict(options),
    )


def logic_kind(logic: Any) -> str:
    """The effect kind an actor source lowers to: an agent kind, else "task"."""
    kind = getattr(logic, "kind", None)
    return kind if kind in AGENT_KINDS else "task"


def _check_schemas(schemas: Mapping[str, Any] | None) -> dict[str, Any]:
    if schemas is None:
        return {}
    if not isinstance(schemas, Mapping):
        raise AgentError(
            f"setup_agent(schemas=...) must map event types to schemas, got {type(schemas).__name__}.",
            code="invalid-argument",
        )
    for event_type in schemas:
        if not isinstance(event_type, str) or not event_type:
            raise AgentError(f"setup_agent(schemas=...): key {event_type!r} is not an event type.", code="invalid-argument")
        if event_type.startswith(RESERVED_PREFIXES):
            raise AgentError(
                f"setup_agent(schemas=...): {event_type!r} is a reserved event type; it never comes "
                "off the wire, so it cannot have a schema.",
                code="invalid-argument",
            )
    return dict(schemas)


def setup_agent(
    *,
    schemas: Mapping[str, Any] | None = None,
    actors: Mapping[str, Any] | None = None,
    guards: Mapping[str, Any] | None = None,
    actions: Mapping[str, Any] | None = None,
    delays: Mapping[str, Any] | None = None,
    extensions: Mapping[str, Any] | None = None,
) -> Any:
    """The engine's `setup(...)` with event `schemas` (pydantic models by event type).

    The schemas hang on `machine.extensions["schemas"]`, where `parse_agent_event` reads them.
    Actor sources may be agent kinds (`create_text_logic`, ...) or `from_promise` tasks.
    """

    merged = dict(extensions or {})
    merged["schemas"] = _check_schemas(schemas)
    return setup(
        guards=dict(guards or {}),
        actions=dict(actions or {}),
        actors=dict(actors or {}),
        delays=dict(delays or {}),
        extensions=merged,
    )
