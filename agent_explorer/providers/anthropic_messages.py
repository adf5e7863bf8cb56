"""`AnthropicExecutors`: the executor protocol over the official `anthropic` SDK's async Messages API.

System text goes to the top-level `system` parameter (the Messages API has no system role), decisions
become tools with a forced `any` choice, and streams are read from the raw server-sent events so the
usage of `message_start` and `message_delta` is counted exactly. It never journals, never retries by
itself (the SDK's retries run inside one call), and never lets the client's key into what it returns.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from ..errors import AgentError
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

__all__ = ["ANTHROPIC_USAGE_NAMES", "DEFAULT_MAX_TOKENS", "AnthropicExecutors"]

PROVIDER = "Anthropic"
#: The Messages API requires `max_tokens`; this is used when neither defaults nor the request set it.
DEFAULT_MAX_TOKENS = 1024

#: Messages usage fields -> the log's stable names. `inputTokens` is the API's `input_tokens`, which
#: excludes the tokens read from or written to the prompt cache (those have names of their own).
ANTHROPIC_USAGE_NAMES = {
    "input_tokens": "inputTokens",
    "output_tokens": "outputTokens",
    "cache_read_input_tokens": "cachedInputTokens",
    "cache_creation_input_tokens": "cacheCreationInputTokens",
}
_OUTPUT_DETAILS = {"thinking_tokens": "reasoningTokens"}
_SERVER_TOOLS = {"web_search_requests": "webSearchRequests", "web_fetch_requests": "webFetchRequests"}
_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool-calls",
    "refusal": "content-filter",
}


def anthropic_usage(usage: Any) -> dict[str, int] | None:
    """A Messages `usage` object in the log's names, with `totalTokens` = input + output."""
    data = {key: value for key, value in as_dict(usage).items() if value is not None}
    if not data:
        return None
    found = counts(data, ANTHROPIC_USAGE_NAMES)
    found.update(counts(as_dict(data.get("output_tokens_details")), _OUTPUT_DETAILS))
    found.update(counts(as_dict(data.get("server_tool_use")), _SERVER_TOOLS))
    found["totalTokens"] = found.get("inputTokens", 0) + found.get("outputTokens", 0)
    return found


def finish_reason(reason: Any) -> str:
    """A Messages `stop_reason` in the AI SDK's vocabulary (stop, length, tool-calls, ...)."""
    if reason is None:
        return "unknown"
    return _FINISH.get(str(reason), "other")


def _system_and_messages(request: AgentRequest, notes: list[str | None]) -> tuple[str | None, list[dict[str, Any]]]:
    prompt = normalize_prompt(request)
    system = [prompt.system] if prompt.system else []
    messages: list[dict[str, Any]] = []
    for message in prompt.messages:
        if message["role"] in ("system", "developer"):
            content = message["content"]
            if not isinstance(content, str):
                raise AgentError(
                    f"The prompt of request {request.request_id} has a system message whose content is not text; "
                    "the Messages API takes system text only.",
                    code="invalid-prompt",
                    request_id=request.request_id,
                )
            system.append(content)
        elif message["role"] == "tool":
            raise AgentError(
                f"The prompt of request {request.request_id} has a 'tool' message; the Messages API carries "
                "tool results as user content blocks of type 'tool_result'.",
                code="invalid-prompt",
                request_id=request.request_id,
            )
        else:
            messages.append({"role": message["role"], "content": message["content"]})
    extra = "\n\n".join(note for note in notes if note)
    if extra:
        messages.append({"role": "user", "content": extra})
    return ("\n\n".join(system) if system else None), messages


class AnthropicExecutors:
    """Text, streams, decisions and plan steps answered by a Claude model over the Messages API.

    `client` is an `anthropic.AsyncAnthropic` instance; `model` the default model, which a request's
    own `model` overrides; `defaults` are keyword arguments of `messages.create` (max_tokens,
    temperature, ...) that the request's options override (`max_tokens` defaults to 1024). Every call
    sends the request's `call_key` as its `Idempotency-Key` header.
    """

    provider = PROVIDER

    def __init__(self, client: Any, model: str, **defaults: Any) -> None:
        if not isinstance(model, str) or not model:
            raise AgentError(f"AnthropicExecutors needs a model id, got {model!r}.", code="invalid-argument")
        if getattr(client, "messages", None) is None:
            raise AgentError(
                f"AnthropicExecutors needs an anthropic.AsyncAnthropic client, got {type(client).__name__}.",
                code="invalid-argument",
            )
        self.client = client
        self.model = model
        self.defaults = dict(defaults)

    def _params(self, request: AgentRequest, notes: list[str | None] | None = None) -> dict[str, Any]:
        system, messages = _system_and_messages(request, list(notes or ()))
        options = merge_options(self.defaults, request)
        if "stop" in options:
            options["stop_sequences"] = options.pop("stop")
        options.setdefault("max_tokens", DEFAULT_MAX_TOKENS)
        headers = with_idempotency_key(options, request)
        params: dict[str, Any] = {"model": request.model or self.model, "messages": messages}
        if system is not None:
            params["system"] = system
        return {**params, **options, "extra_headers": headers}

    async def _create(self, request: AgentRequest, params: dict[str, Any]) -> Any:
        return await call_provider(PROVIDER, request, self.client.messages.create, params, secrets_of(self.client))

    # -- the executor protocol -------------------------------------------------------------------

    async def generate_text(self, request: AgentRequest) -> dict[str, Any]:
        params = self._params(request)
        response = await self._create(request, params)
        with guarded(PROVIDER, request, secrets_of(self.client)):
            blocks = response.content
            if not isinstance(blocks, list):
                raise TypeError(f"content is {type(blocks).__name__}, not a list of blocks")
            text = "".join(block.text for block in blocks if getattr(block, "type", None) == "text")
            return {
                "text": text,
                "finishReason": finish_reason(response.stop_reason),
                "model": response.model or params["model"],
                "usage": anthropic_usage(response.usage),
            }

    async def stream_text(self, request: AgentRequest) -> AsyncIterator[Any]:
        params = self._params(request)
        params["stream"] = True
        stream = await self._create(request, params)
        model: str | None = None
        reason: Any = None
        usage: dict[str, Any] = {}
        secrets = secrets_of(self.client)
        async with aclosing(provider_stream(PROVIDER, request, stream, secrets)) as events:
            async for event in events:
                with guarded(PROVIDER, request, secrets):
                    kind = event.type
                    if kind == "message_start":
                        model = event.message.model or model
                        usage.update({k: v for k, v in as_dict(event.message.usage).items() if v is not None})
                    elif kind == "content_block_delta" and getattr(event.delta, "type", None) == "text_delta":
                        if event.delta.text:
                            yield str(event.delta.text)
                    elif kind == "message_delta":
                        reason = getattr(event.delta, "stop_reason", None) or reason
                        # message_delta's counts are cumulative: they replace message_start's.
                        usage.update({k: v for k, v in as_dict(event.usage).items() if v is not None})
        yield {"usage": anthropic_usage(usage), "model": model or params["model"], "finishReason": finish_reason(reason)}

    async def decide(self, request: AgentRequest) -> dict[str, Any]:
        tools = event_tools(request)
        params = self._params(request, [plan_note(request), retry_note(request)])
        params["tools"] = [
            {"name": t["name"], "description": t["description"], "input_schema": t["parameters"]} for t in tools.tools
        ]
        if len(tools.tools) == 1:
            params.setdefault("tool_choice", {"type": "tool", "name": tools.tools[0]["name"], "disable_parallel_tool_use": True})
        else:
            params.setdefault("tool_choice", {"type": "any", "disable_parallel_tool_use": True})
        response = await self._create(request, params)
        with guarded(PROVIDER, request, secrets_of(self.client)):
            uses = [block for block in response.content if getattr(block, "type", None) == "tool_use"]
            if uses:
                event = tools.event_for(uses[0].name, uses[0].input)
            else:
                event = {"type": NO_TOOL_CALL}
            return {
                "choice": event,
                "model": response.model or params["model"],
                "usage": anthropic_usage(response.usage),
            }

    def __repr__(self) -> str:
        return f"AnthropicExecutors(model={self.model!r}, base_url={str(getattr(self.client, 'base_url', ''))!r})"
