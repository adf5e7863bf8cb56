"""Model executors: the small protocol any provider implements, and the deterministic `ScriptedModel`.

An executor answers the model-shaped requests of a run (`generate_text`, `stream_text`, `decide`);
this module also normalises what an executor returns into (value, usage, model) so the runtime can
journal `@agent.usage` uniformly. It never touches a log, a store or a machine.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..errors import AgentError

__all__ = [
    "AgentExecutors",
    "AgentRequest",
    "ChoiceResult",
    "ScriptedModel",
    "TextResult",
    "as_executors",
    "normalize_choice_result",
    "normalize_text_result",
    "prompt_key",
]


@dataclass(frozen=True)
class AgentRequest:
    """What one agent effect asks of an executor; `request_id` is `site#occurrence`.

    `call_key` is the idempotency key to hand to a provider: it is derived from the log (the
    execution id and the request id), so a request re-executed after a crash carries the same key.
    `events` are the candidate event types of a decision or plan step; `applied` the events a plan
    has applied so far (derived from the journal). `schemas` are the machine's registered event
    schemas (by type), so a provider can describe each candidate's payload to the model.
    """

    kind: str
    request_id: str
    site: str
    occurrence: int
    src: str | None = None
    input: Any = None
    prompt: Any = None
    mode: str = "generate"
    model: str | None = None
    events: tuple[str, ...] = ()
    call_key: str | None = None
    max_steps: int | None = None
    stop_on: tuple[str, ...] = ()
    applied: tuple[Mapping[str, Any], ...] = ()
    rejected: tuple[Mapping[str, Any], ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    schemas: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        """A JSON-friendly view (camelCase keys, as the upstream design spells a request)."""
        data: dict[str, Any] = {
            "kind": self.kind,
            "requestId": self.request_id,
            "site": self.site,
            "occurrence": self.occurrence,
            "src": self.src,
            "input": self.input,
            "prompt": self.prompt,
        }
        if self.kind == "text":
            data["mode"] = self.mode
        if self.model is not None:
            data["model"] = self.model
        if self.call_key is not None:
            data["callKey"] = self.call_key
        if self.kind in ("decision", "plan"):
            data["events"] = list(self.events)
        if self.kind == "plan":
            data["maxSteps"] = self.max_steps
            data["stopOn"] = list(self.stop_on)
            data["applied"] = [dict(e) for e in self.applied]
        if self.rejected:
            data["rejected"] = [dict(e) for e in self.rejected]
        return data


@runtime_checkable
class AgentExecutors(Protocol):
    """The model calls a run makes. Any provider can implement these three methods.

    - `generate_text(request)` -> `str` or `{"text": ..., "usage"?: {...}, "model"?: str,
      "finishReason"?: str}` (sync or async).
    - `stream_text(request)` -> an (async) iterable of `str` chunks; it may yield one final
      `{"usage": {...}, "model": ..., "finishReason"?: ...}` dict. Chunks are live-only: only the
      joined text is journaled.
    - An executor that reports `finishReason` gets it journaled in the output, with the model
      that answered: `{"text", "finishReason", "model"}`; otherwise the output is `{"text"}`.
    - `decide(request)` -> an event type, an event dict, or `{"choice": type-or-event,
      "usage"?: {...}, "model"?: str}` (sync or async); `request.events` lists the legal types.
    """

    def generate_text(self, request: AgentRequest) -> Any: ...

    def stream_text(self, request: AgentRequest) -> Any: ...

    def decide(self, request: AgentRequest) -> Any: ...


@dataclass(frozen=True)
class TextResult:
    text: str
    usage: dict[str, Any] | None = None
    model: str | None = None
    finish_reason: str | None = None


@dataclass(frozen=True)
class ChoiceResult:
    event: dict[str, Any]
    usage: dict[str, Any] | None = None
    model: str | None = None


def _bad_result(what: str, value: Any) -> AgentError:
    return AgentError(
        f"An executor's {what} returned {type(value).__name__} {value!r:.120}; expected "
        + ("a str or a dict with a str 'text'." if what != "decide" else "an event type, an event dict "
           "with a string 'type', or {'choice': ...}."),
        code="invalid-executor-result",
    )


def normalize_text_result(value: Any) -> TextResult:
    """Accept `str` or `{"text", "usage"?, "model"?}` from `generate_text`."""
    if isinstance(value, TextResult):
        return value
    if isinstance(value, str):
        return TextResult(value)
    if isinstance(value, Mapping) and isinstance(value.get("text"), str):
        usage = value.get("usage")
        finish = value.get("finishReason")
        return TextResult(
            value["text"],
            dict(usage) if isinstance(usage, Mapping) else None,
            value.get("model"),
            str(finish) if finish is not None else None,
        )
    raise _bad_result("generate_text", value)


def _as_event(choice: Any) -> dict[str, Any] | None:
    if isinstance(choice, str):
        return {"type": choice}
    if isinstance(choice, Mapping) and isinstance(choice.get("type"), str):
        return dict(choice)
    return None


def normalize_choice_result(value: Any) -> ChoiceResult:
    """Accept an event type, an event dict, or `{"choice": ..., "usage"?, "model"?}` from `decide`."""
    if isinstance(value, ChoiceResult):
        return value
    if isinstance(value, Mapping) and "choice" in value and "type" not in value:
        event = _as_event(value["choice"])
        if event is None:
            raise _bad_result("decide", value)
        usage = value.get("usage")
        return ChoiceResult(event, dict(usage) if isinstance(usage, Mapping) else None, value.get("model"))
    event = _as_event(value)
    if event is None:
        raise _bad_result("decide", value)
    return ChoiceResult(event)


async def maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


class _MappingExecutors:
    """Adapts `{"generate_text": fn, "stream_text": fn, "decide": fn}` to the protocol."""

    def __init__(self, functions: Mapping[str, Callable[..., Any]]) -> None:
        self._functions = dict(functions)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._functions[name]
        except KeyError:
            raise AttributeError(name) from None


def as_executors(executors: Any) -> Any:
    """The executors object a run calls: the object itself, or a dict of functions wrapped."""
    if executors is None:
        return None
    if isinstance(executors, Mapping):
        return _MappingExecutors(executors)
    return executors


def prompt_key(prompt: Any) -> str:
    """The key `ScriptedModel` matches a prompt by: the text itself, or the last message's content."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Sequence) and prompt:
        last = prompt[-1]
        if isinstance(last, Mapping) and isinstance(last.get("content"), str):
            return str(last["content"])
    return json.dumps(prompt, sort_keys=True, default=str)


UsageSpec = Mapping[str, Any] | Callable[[AgentRequest, str], Mapping[str, Any]] | None


class ScriptedModel:
    """A deterministic model for offline runs, samples and tests.

    `responses` is a list answered in order, or a dict answered by prompt (`prompt_key`); a dict
    value may be a list, answered in order for repeated prompts. `decisions` likewise (a list, or
    a dict by prompt) scripts `decide`: each call consumes one choice, so a guard-rejected choice
    followed by a good one scripts a retry. `usage` (a dict, or `fn(request, text)`) is reported
    with every answer so the runtime journals it. `latency` (seconds, a dict by prompt, or
    `fn(request)`) lets tests race calls. `calls` records every request executed, in order.
    """

    def __init__(
        self,
        responses: Sequence[str] | Mapping[str, str | Sequence[str]] = (),
        *,
        usage: UsageSpec = None,
        decisions: Sequence[Any] | Mapping[str, Any] = (),
        model: str = "scripted",
        latency: float | Mapping[str, float] | Callable[[AgentRequest], float] = 0.0,
        chunk_size: int = 4,
    ) -> None:
        self._responses = self._queues(responses)
        self._decisions = self._queues(decisions)
        self._usage = usage
        self.model = model
        self._latency = latency
        self._chunk_size = max(1, chunk_size)
        self.calls: list[AgentRequest] = []

    @staticmethod
    def _queues(spec: Any) -> list[Any] | dict[str, list[Any]]:
        if isinstance(spec, Mapping):
            return {
                str(key): (list(value) if isinstance(value, (list, tuple)) else [value])
                for key, value in spec.items()
            }
        return list(spec)

    def _next(self, queues: list[Any] | dict[str, list[Any]], request: AgentRequest, what: str) -> Any:
        key = prompt_key(request.prompt)
        if isinstance(queues, dict):
            queue = queues.get(key)
            if not queue:
                raise AgentError(
                    f"ScriptedModel has no {what} scripted for prompt {key!r:.200} "
                    f"(request {request.request_id}); script one under that prompt.",
                    code="scripted-model-exhausted",
                    request_id=request.request_id,
                )
            # A prompt's last scripted answer repeats, so re-executions stay deterministic.
            return queue.pop(0) if len(queue) > 1 else queue[0]
        if not queues:
            raise AgentError(
                f"ScriptedModel ran out of scripted {what} at request {request.request_id} "
                f"(prompt {key!r:.200}); {len(self.calls)} calls were answered.",
                code="scripted-model-exhausted",
                request_id=request.request_id,
            )
        return queues.pop(0)

    def _usage_for(self, request: AgentRequest, text: str) -> dict[str, Any] | None:
        if self._usage is None:
            return None
        if callable(self._usage):
            return dict(self._usage(request, text))
        return dict(self._usage)

    async def _wait(self, request: AgentRequest) -> None:
        latency = self._latency
        if callable(latency):
            seconds = float(latency(request))
        elif isinstance(latency, Mapping):
            seconds = float(latency.get(prompt_key(request.prompt), 0.0))
        else:
            seconds = float(latency)
        # Yield even at zero latency so concurrent calls interleave as real I/O would.
        await asyncio.sleep(seconds)

    async def generate_text(self, request: AgentRequest) -> dict[str, Any]:
        self.calls.append(request)
        text = self._next(self._responses, request, "response")
        await self._wait(request)
        return {"text": str(text), "usage": self._usage_for(request, str(text)), "model": self.model}

    async def stream_text(self, request: AgentRequest) -> AsyncIterator[Any]:
        self.calls.append(request)
        text = str(self._next(self._responses, request, "response"))
        await self._wait(request)
        for start in range(0, len(text), self._chunk_size):
            yield text[start : start + self._chunk_size]
            await asyncio.sleep(0)
        yield {"usage": self._usage_for(request, text), "model": self.model}

    async def decide(self, request: AgentRequest) -> dict[str, Any]:
        self.calls.append(request)
        choice = self._next(self._decisions, request, "decision")
        await self._wait(request)
        return {"choice": choice, "usage": self._usage_for(request, json.dumps(choice, default=str)), "model": self.model}

    def remaining(self) -> int:
        """How many scripted answers (responses + decisions, in-order scripts) are left."""
        count = 0
        for queues in (self._responses, self._decisions):
            count += len(queues) if isinstance(queues, list) else 0
        return count


async def collect_stream(stream: Any, on_chunk: Callable[[str], Any] | None = None) -> TextResult:
    """Join a `stream_text` result into its final text; chunks go to `on_chunk` only (live-only)."""
    stream = await maybe_await(stream)
    parts: list[str] = []
    usage: dict[str, Any] | None = None
    model: str | None = None
    finish: str | None = None

    def take(item: Any) -> None:
        nonlocal usage, model, finish
        if isinstance(item, str):
            parts.append(item)
            if on_chunk is not None:
                on_chunk(item)
        elif isinstance(item, Mapping):
            if isinstance(item.get("usage"), Mapping):
                usage = dict(item["usage"])
            if item.get("model") is not None:
                model = str(item["model"])
            if item.get("finishReason") is not None:
                finish = str(item["finishReason"])
        else:
            raise _bad_result("stream_text", item)

    if hasattr(stream, "__aiter__"):
        async for item in stream:
            take(item)
    elif isinstance(stream, Iterable):
        for item in stream:
            take(item)
    else:
        raise _bad_result("stream_text", stream)
    return TextResult("".join(parts), usage, model, finish)
