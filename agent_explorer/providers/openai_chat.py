"""`OpenAIExecutors`: the executor protocol over the official `openai` SDK's async Chat Completions.

The same executor serves OpenAI, Azure OpenAI and every OpenAI-compatible server (vLLM, Ollama,
llama.cpp's server, LM Studio, OpenRouter) through the client's `base_url`. It maps requests onto
the wire and answers back; it never journals, never retries by itself (the SDK's retries run inside
one call), and never lets the client's key into what it returns or raises.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from ..errors import AgentError, ProviderError
from ..runtime.executors import AgentRequest
from .common import (
    NO_TOOL_CALL,
    as_dict,
    call_provider,
    counts,
    event_tools,
    guarded,
    merge_options,
    normalize_prompt,
    plan_note,
    provider_stream,
    retry_note,
    secrets_of,
    with_idempotency_key,
)

__all__ = ["OPENAI_USAGE_NAMES", "OpenAIExecutors"]

PROVIDER = "OpenAI"

#: Chat Completions usage fields -> the log's stable names (top level, then the two detail objects).
OPENAI_USAGE_NAMES = {
    "prompt_tokens": "inputTokens",
    "completion_tokens": "outputTokens",
    "total_tokens": "totalTokens",
}
_PROMPT_DETAILS = {
    "cached_tokens": "cachedInputTokens",
    "cache_write_tokens": "cacheCreationInputTokens",
    "audio_tokens": "inputAudioTokens",
}
_COMPLETION_DETAILS = {
    "reasoning_tokens": "reasoningTokens",
    "audio_tokens": "outputAudioTokens",
    "accepted_prediction_tokens": "acceptedPredictionTokens",
    "rejected_prediction_tokens": "rejectedPredictionTokens",
}
_FINISH = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
    "content_filter": "content-filter",
}


def openai_usage(usage: Any) -> dict[str, int] | None:
    """A `CompletionUsage` in the log's names; None when the server sent no usage."""
    data = as_dict(usage)
    if not data:
        return None
    found = counts(data, OPENAI_USAGE_NAMES)
    found.update(counts(as_dict(data.get("prompt_tokens_details")), _PROMPT_DETAILS))
    found.update(counts(as_dict(data.get("completion_tokens_details")), _COMPLETION_DETAILS))
    if "totalTokens" not in found and ("inputTokens" in found or "outputTokens" in found):
        found["totalTokens"] = found.get("inputTokens", 0) + found.get("outputTokens", 0)
    return found


def finish_reason(reason: Any) -> str:
    """A Chat Completions `finish_reason` in the AI SDK's vocabulary (stop, length, tool-calls, ...)."""
    if reason is None:
        return "unknown"
    return _FINISH.get(str(reason), "other")


class OpenAIExecutors:
    """Text, streams, decisions and plan steps answered by a Chat Completions model.

    `client` is an `openai.AsyncOpenAI` (or `AsyncAzureOpenAI`) instance; `model` the default model,
    which a request's own `model` (the actor logic's `model=`) overrides; `defaults` are keyword
    arguments of `chat.completions.create` (temperature, max_tokens, ...) that the request's options
    override. Every call sends the request's `call_key` as its `Idempotency-Key` header.
    """

    provider = PROVIDER

    def __init__(self, client: Any, model: str, **defaults: Any) -> None:
        if not isinstance(model, str) or not model:
            raise AgentError(f"OpenAIExecutors needs a model id, got {model!r}.", code="invalid-argument")
        if getattr(getattr(client, "chat", None), "completions", None) is None:
            raise AgentError(
                f"OpenAIExecutors needs an openai.AsyncOpenAI client, got {type(client).__name__}.",
                code="invalid-argument",
            )
        self.client = client
        self.model = model
        self.defaults = dict(defaults)

    # -- request building ------------------------------------------------------------------------

    def _params(self, request: AgentRequest, notes: list[str | None] | None = None) -> dict[str, Any]:
        prompt = normalize_prompt(request)
        messages: list[dict[str, Any]] = []
        if prompt.system is not None:
            messages.append({"role": "system", "content": prompt.system})
        messages.extend(prompt.messages)
        extra = "\n\n".join(note for note in notes or () if note)
        if extra:
            messages.append({"role": "user", "content": extra})
        options = merge_options(self.defaults, request)
        headers = with_idempotency_key(options, request)
        return {"model": request.model or self.model, "messages": messages, **options, "extra_headers": headers}

    async def _create(self, request: AgentRequest, params: dict[str, Any]) -> Any:
        return await call_provider(PROVIDER, request, self.client.chat.completions.create, params, secrets_of(self.client))

    def _first_choice(self, request: AgentRequest, response: Any) -> Any:
        choices = getattr(response, "choices", None)
        if not choices:
            raise ProviderError(
                f"{PROVIDER} answered request {request.request_id} with no choices.", request_id=request.request_id
            )
        return choices[0]

    # -- the executor protocol -------------------------------------------------------------------

    async def generate_text(self, request: AgentRequest) -> dict[str, Any]:
        params = self._params(request)
        response = await self._create(request, params)
        with guarded(PROVIDER, request, secrets_of(self.client)):
            choice = self._first_choice(request, response)
            text = choice.message.content or ""
            if not isinstance(text, str):
                raise TypeError(f"message content is {type(text).__name__}, not text")
            return {
                "text": text,
                "finishReason": finish_reason(choice.finish_reason),
                "model": response.model or params["model"],
                "usage": openai_usage(response.usage),
            }

    async def stream_text(self, request: AgentRequest) -> AsyncIterator[Any]:
        params = self._params(request)
        params["stream"] = True
        params["stream_options"] = {**dict(params.get("stream_options") or {}), "include_usage": True}
        stream = await self._create(request, params)
        model: str | None = None
        reason: Any = None
        usage: dict[str, int] | None = None
        secrets = secrets_of(self.client)
        async with aclosing(provider_stream(PROVIDER, request, stream, secrets)) as events:
            async for chunk in events:
                with guarded(PROVIDER, request, secrets):
                    model = chunk.model or model
                    if chunk.usage is not None:
                        usage = openai_usage(chunk.usage)
                    for choice in chunk.choices or ():
                        if choice.finish_reason is not None:
                            reason = choice.finish_reason
                        content = choice.delta.content if choice.delta is not None else None
                        if content:
                            yield str(content)
        yield {"usage": usage, "model": model or params["model"], "finishReason": finish_reason(reason)}

    async def decide(self, request: AgentRequest) -> dict[str, Any]:
        tools = event_tools(request)
        params = self._params(request, [plan_note(request), retry_note(request)])
        params["tools"] = [
            {"type": "function", "function": {"name": t["name"], "description": t["description"], "parameters": t["parameters"]}}
            for t in tools.tools
        ]
        if len(tools.tools) == 1:
            params.setdefault("tool_choice", {"type": "function", "function": {"name": tools.tools[0]["name"]}})
        else:
            params.setdefault("tool_choice", "required")
        params.setdefault("parallel_tool_calls", False)
        response = await self._create(request, params)
        with guarded(PROVIDER, request, secrets_of(self.client)):
            choice = self._first_choice(request, response)
            calls = choice.message.tool_calls or []
            if calls:
                function = calls[0].function
                event = tools.event_for(function.name, function.arguments)
            else:
                event = {"type": NO_TOOL_CALL}
            return {
                "choice": event,
                "model": response.model or params["model"],
                "usage": openai_usage(response.usage),
            }

    def __repr__(self) -> str:
        return f"OpenAIExecutors(model={self.model!r}, base_url={str(getattr(self.client, 'base_url', ''))!r})"
