"""What every provider executor shares: prompt shapes, idempotency keys, event tools, usage, errors.

A provider module maps these neutral pieces onto one API's wire shape. Nothing here imports an SDK
(a client is duck-typed and exceptions are read by attribute), touches a log, or reads a clock; the
one rule it must never break is that no credential reaches text that may be journaled.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import re
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import AgentError, ProviderError
from ..runtime.decisions import PLAN_DONE_EVENT_TYPE
from ..runtime.executors import AgentRequest

__all__ = [
    "BAD_ARGUMENTS",
    "NO_TOOL_CALL",
    "EventTools",
    "Prompt",
    "as_dict",
    "call_provider",
    "counts",
    "event_tools",
    "fit_to",
    "guarded",
    "idempotency_key",
    "merge_options",
    "normalize_prompt",
    "plan_note",
    "provider_error",
    "provider_stream",
    "retry_note",
    "secrets_of",
    "tool_name_for",
    "with_idempotency_key",
]

#: The event type a decision answer is given when the model called no tool: it is never a legal
#: event, so `resolve_decision` refuses it and asks again, telling the model what went wrong.
NO_TOOL_CALL = "(no tool call)"
#: Likewise for a tool call whose arguments are not a JSON object.
BAD_ARGUMENTS = "(bad arguments for {name})"

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_ROLES = ("system", "developer", "user", "assistant", "tool")


@dataclass(frozen=True)
class Prompt:
    """A prompt in neutral form: an optional system text and chat messages `{role, content}`."""

    system: str | None
    messages: list[dict[str, Any]]


def _bad_prompt(request: AgentRequest, why: str) -> AgentError:
    return AgentError(
        f"The prompt of request {request.request_id} {why}; a prompt is a string, a list of "
        "{'role', 'content'} messages, or {'system'?: str, 'messages': [...]} / {'system'?: str, 'prompt': str}.",
        code="invalid-prompt",
        request_id=request.request_id,
    )


def _messages(request: AgentRequest, items: Any) -> list[dict[str, Any]]:
    if isinstance(items, str | bytes) or not isinstance(items, Sequence):
        raise _bad_prompt(request, f"has messages of type {type(items).__name__}")
    out: list[dict[str, Any]] = []
    for position, message in enumerate(items):
        if not isinstance(message, Mapping):
            raise _bad_prompt(request, f"has message {position} of type {type(message).__name__}")
        role = message.get("role")
        if role not in _ROLES:
            raise _bad_prompt(request, f"has message {position} with role {role!r} (expected one of {list(_ROLES)})")
        if "content" not in message:
            raise _bad_prompt(request, f"has message {position} with no 'content'")
        out.append(dict(message))
    return out


def normalize_prompt(request: AgentRequest) -> Prompt:
    """The request's prompt as (system, messages); a bad shape raises `invalid-prompt`."""
    prompt = request.prompt
    if isinstance(prompt, str):
        return Prompt(None, [{"role": "user", "content": prompt}])
    if isinstance(prompt, Mapping):
        system = prompt.get("system")
        if system is not None and not isinstance(system, str):
            raise _bad_prompt(request, f"has a system of type {type(system).__name__}")
        if "messages" in prompt:
            messages = _messages(request, prompt["messages"])
        elif isinstance(prompt.get("prompt"), str):
            messages = [{"role": "user", "content": prompt["prompt"]}]
        else:
            raise _bad_prompt(request, "is a dict with neither 'messages' nor a string 'prompt'")
        return Prompt(system, messages)
    if isinstance(prompt, Sequence) and not isinstance(prompt, bytes):
        return Prompt(None, _messages(request, prompt))
    raise _bad_prompt(request, f"is {type(prompt).__name__}")


def idempotency_key(request: AgentRequest) -> str:
    """The `Idempotency-Key` of the call a request makes: its `call_key` (derived from the log, so a
    re-execution after a crash presents the same key), plus `/step-k` for a plan's k-th step (k > 1)
    and `/attempt-n` for the n-th asking of a decision whose earlier choices were refused."""
    key = request.call_key or request.request_id
    if request.kind == "plan" and request.applied:
        key += f"/step-{len(request.applied) + 1}"
    if request.rejected:
        key += f"/attempt-{len(request.rejected) + 1}"
    return key


_ALIASES = {
    "maxTokens": "max_tokens",
    "maxOutputTokens": "max_tokens",
    "topP": "top_p",
    "topK": "top_k",
    "frequencyPenalty": "frequency_penalty",
    "presencePenalty": "presence_penalty",
    "stopSequences": "stop",
}


def with_idempotency_key(options: dict[str, Any], request: AgentRequest) -> dict[str, str]:
    """The call's extra headers: the caller's own (taken out of `options`) plus the request's
    `Idempotency-Key`, so a retried call is one call to the provider."""
    headers = dict(options.pop("extra_headers", None) or {})
    headers["Idempotency-Key"] = idempotency_key(request)
    return headers


def merge_options(defaults: Mapping[str, Any], request: AgentRequest) -> dict[str, Any]:
    """The executor's defaults overlaid with the request's options (the actor logic's keyword
    arguments); the AI SDK's camelCase names are accepted for the common ones."""
    merged: dict[str, Any] = {}
    for source in (defaults, request.options):
        for key, value in source.items():
            merged[_ALIASES.get(key, key)] = value
    return merged


def _accepted(create: Any) -> set[str] | None:
    """The keyword names `create` takes, or None when it takes any (or cannot be inspected)."""
    try:
        parameters = inspect.signature(create).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return {p.name for p in parameters}


def fit_to(create: Any, params: dict[str, Any]) -> dict[str, Any]:
    """`params` as `create(**...)` takes them: a parameter the SDK's method does not name (a
    server-specific option such as Ollama's `num_ctx`, or one a newer SDK dropped) goes in the
    request body through `extra_body` instead of failing the call with a TypeError."""
    accepted = _accepted(create)
    if accepted is None:
        return params
    fitted: dict[str, Any] = {}
    extra = dict(params.get("extra_body") or {})
    for key, value in params.items():
        if key == "extra_body":
            continue
        if key in accepted:
            fitted[key] = value
        else:
            extra[key] = value
    if extra:
        fitted["extra_body"] = extra
    return fitted


def retry_note(request: AgentRequest) -> str | None:
    """What the model is told when it is asked again: the choices refused so far, and why."""
    if not request.rejected:
        return None
    lines = []
    for rejected in request.rejected:
        event = rejected.get("event") or {}
        shown = json.dumps(event, sort_keys=True, default=str)
        lines.append(f"- {shown}: {rejected.get('reason')}")
    return "Your previous choice was refused:\n" + "\n".join(lines) + "\nCall exactly one of the tools again."


def plan_note(request: AgentRequest) -> str | None:
    """A plan step's progress, so the model knows which moves it already made."""
    if request.kind != "plan":
        return None
    applied = [json.dumps(dict(e), sort_keys=True, default=str) for e in request.applied]
    done = tool_name_for(PLAN_DONE_EVENT_TYPE)
    text = "Moves applied so far: " + ("; ".join(applied) if applied else "none") + "."
    return text + f" Make the next move by calling one tool, or call {done} when the plan is complete."


# -- event tools -------------------------------------------------------------------------------------


def tool_name_for(event_type: str) -> str:
    """A legal tool name (letters, digits, `_`, `-`; at most 64) for an event type: other
    characters (the dots of `agent.plan.done`) become `_`, and a name that had to change, or is
    too long, keeps a short hash of the type so two types never share a name."""
    if _TOOL_NAME.match(event_type):
        return event_type
    base = re.sub(r"[^A-Za-z0-9_-]", "_", event_type)
    if base == event_type.replace(".", "_") and len(base) <= 64:
        return base
    digest = hashlib.sha256(event_type.encode("utf-8")).hexdigest()[:8]
    return f"{base[:55]}_{digest}"


def _json_schema(schema: Any) -> dict[str, Any] | None:
    """The JSON schema of a registered event schema (a pydantic model or TypeAdapter), or None."""
    from pydantic import BaseModel, TypeAdapter

    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    if isinstance(schema, TypeAdapter):
        found: dict[str, Any] = schema.json_schema()
        return found
    return None  # a plain callable schema cannot describe itself


def _parameters(event_type: str, schema: Any) -> tuple[dict[str, Any], str | None]:
    """A tool's parameters (the event's payload without `type`, which the tool's name carries)."""
    found = _json_schema(schema) if schema is not None else None
    if not found or found.get("type") != "object":
        return {"type": "object", "properties": {}}, None
    parameters = dict(found)
    description = parameters.pop("description", None)
    parameters.pop("title", None)
    properties = dict(parameters.get("properties") or {})
    properties.pop("type", None)
    parameters["properties"] = properties
    if "required" in parameters:
        parameters["required"] = [name for name in parameters["required"] if name != "type"]
    return parameters, description if isinstance(description, str) else None


@dataclass(frozen=True)
class EventTools:
    """The tools of one decision or plan step, and the way back from a tool call to the event."""

    tools: list[dict[str, Any]]  # neutral: {"name", "description", "parameters"}
    by_name: dict[str, str]  # tool name -> event type

    def event_for(self, name: str, arguments: Any) -> dict[str, Any]:
        """The machine event a tool call stands for. An unknown name comes back as itself, and
        arguments that are not a JSON object as the type `(bad arguments for <name>)`: neither is a
        legal event, so `resolve_decision` refuses the choice and asks again, as for a schema failure."""
        event_type = self.by_name.get(name, name)
        payload: Any
        if arguments is None or arguments == "":
            payload = {}
        elif isinstance(arguments, str):
            try:
                payload = json.loads(arguments)
            except ValueError:
                payload = None
        else:
            payload = arguments
        if not isinstance(payload, Mapping):
            return {"type": BAD_ARGUMENTS.format(name=name)}
        return {**{k: v for k, v in payload.items() if k != "type"}, "type": event_type}


def event_tools(request: AgentRequest) -> EventTools:
    """One tool per candidate event type (a plan's candidates include `agent.plan.done`)."""
    events: Iterable[str] = request.events
    if request.kind == "plan" and PLAN_DONE_EVENT_TYPE not in request.events:
        events = [*request.events, *request.stop_on, PLAN_DONE_EVENT_TYPE]
    tools: list[dict[str, Any]] = []
    by_name: dict[str, str] = {}
    for event_type in dict.fromkeys(events):
        name = tool_name_for(event_type)
        if name in by_name:  # two types that only differ in illegal characters
            digest = hashlib.sha256(event_type.encode("utf-8")).hexdigest()[:8]
            name = f"{name[:55]}_{digest}"
        if event_type == PLAN_DONE_EVENT_TYPE:
            parameters: dict[str, Any] = {"type": "object", "properties": {}}
            description: str | None = "Finish the plan: no further moves are needed."
        else:
            parameters, description = _parameters(event_type, request.schemas.get(event_type))
        by_name[name] = event_type
        tools.append({
            "name": name,
            "description": description or f"Send the event {event_type!r} to the agent.",
            "parameters": parameters,
        })
    if not tools:
        raise AgentError(
            f"Request {request.request_id} has no candidate events, so there is nothing for the model to choose.",
            code="invalid-argument",
            request_id=request.request_id,
        )
    return EventTools(tools, by_name)


# -- responses --------------------------------------------------------------------------------------


def as_dict(value: Any) -> dict[str, Any]:
    """An SDK model (pydantic) or mapping as a plain dict; anything else as an empty one."""
    if isinstance(value, Mapping):
        return dict(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        dumped = dump()
        if isinstance(dumped, Mapping):
            return dict(dumped)
    return {}


def counts(source: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, int]:
    """The integer counts of `source` renamed by `names` (wire name -> stable name); a count the
    provider did not send (absent or null) is left out rather than reported as zero."""
    out: dict[str, int] = {}
    for wire, stable in names.items():
        value = source.get(wire)
        if isinstance(value, int) and not isinstance(value, bool):
            out[stable] = value
    return out


class guarded:
    """`with guarded(provider, request, secrets):` turns what a response parser trips over (a body
    that is not the documented shape) into a `ProviderError` naming the provider and request."""

    def __init__(self, provider: str, request: AgentRequest, secrets: Sequence[str]) -> None:
        self.provider, self.request, self.secrets = provider, request, secrets

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> None:
        if error is None or isinstance(error, AgentError) or not isinstance(error, Exception):
            return
        failure = ProviderError(
            f"{self.provider} answered request {self.request.request_id} with a response that is not the "
            f"documented shape ({type(error).__name__}: {scrub(str(error), self.secrets)}).",
            request_id=self.request.request_id,
        )
        failure.__cause__ = _scrubbed_copy(error, self.secrets)
        failure.__suppress_context__ = True
        raise failure


# -- failures ---------------------------------------------------------------------------------------

_SECRET_PATTERNS = (
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"),
    re.compile(r"(?i)((?:x-)?api[-_]key['\"]?\s*[:=]\s*['\"]?)[A-Za-z0-9._~+/=-]{8,}"),
)
_AUTH_HEADERS = ("authorization", "x-api-key", "api-key", "proxy-authorization")


def secrets_of(client: Any) -> list[str]:
    """The credentials a client holds (API keys, tokens, auth header values), longest first."""
    found: set[str] = set()
    for attribute in ("api_key", "admin_api_key", "auth_token"):
        value = getattr(client, attribute, None)
        if isinstance(value, str) and len(value) >= 4:
            found.add(value)
    for attribute in ("auth_headers", "default_headers", "_custom_headers"):
        try:
            headers = getattr(client, attribute, None)
        except Exception:  # noqa: BLE001 - a property that cannot build headers holds none
            continue
        if isinstance(headers, Mapping):
            for name, value in headers.items():
                if isinstance(value, str) and str(name).lower() in _AUTH_HEADERS and len(value) >= 4:
                    found.add(value)
                    if value.lower().startswith("bearer "):
                        found.add(value[7:].strip())
    return sorted(found, key=len, reverse=True)


def scrub(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + "[redacted]", text)
    return text


_CAUSE_CLASSES: dict[str, type[Exception]] = {}


def _cause_class(name: str) -> type[Exception]:
    """A stand-in exception class named like the SDK's (its name is what the log records)."""
    cls = _CAUSE_CLASSES.get(name)
    if cls is None:
        cls = type(name if name.isidentifier() else "Error", (Exception,), {"__module__": __name__})
        _CAUSE_CLASSES[name] = cls
    return cls


def _scrubbed_copy(error: BaseException, secrets: Sequence[str], depth: int = 0) -> Exception:
    """The error as a plain exception of the same class name with a scrubbed message and cause chain:
    the original may hold the request (and its auth headers) and an unscrubbed message."""
    copy = _cause_class(type(error).__name__)(scrub(str(error), secrets))
    cause = error.__cause__ or (None if error.__suppress_context__ else error.__context__)
    if cause is not None and depth < 4:
        copy.__cause__ = _scrubbed_copy(cause, secrets, depth + 1)
    return copy


def provider_error(provider: str, request: AgentRequest, error: Exception, secrets: Sequence[str]) -> ProviderError:
    """A failed call as the `ProviderError` the actor's error completion records (`{name, message,
    cause}` once normalized), with every credential of the client scrubbed from message and cause."""
    status = getattr(error, "status_code", None)
    provider_request_id = getattr(error, "request_id", None)
    detail = scrub(str(error), secrets)
    where = f" (HTTP {status})" if isinstance(status, int) else ""
    message = f"{provider} call for request {request.request_id} failed{where}: {type(error).__name__}: {detail}"
    failure = ProviderError(
        message,
        request_id=request.request_id,
        status=status if isinstance(status, int) else None,
        provider_request_id=provider_request_id if isinstance(provider_request_id, str) else None,
    )
    failure.__cause__ = _scrubbed_copy(error, secrets)
    failure.__suppress_context__ = True
    return failure


async def call_provider(
    provider: str, request: AgentRequest, create: Callable[..., Awaitable[Any]], params: dict[str, Any], secrets: Sequence[str]
) -> Any:
    """One SDK call with the parameters it accepts; what its retries could not fix is raised as the
    scrubbed `ProviderError`, never as the SDK's own error (which may hold the request's headers)."""
    try:
        return await create(**fit_to(create, params))
    except asyncio.CancelledError:
        raise
    except AgentError:
        raise
    except Exception as error:  # noqa: BLE001 - what the SDK's retries could not fix
        failure = provider_error(provider, request, error, secrets)
        raise failure from failure.__cause__


async def provider_stream(provider: str, request: AgentRequest, stream: Any, secrets: Sequence[str]) -> AsyncGenerator[Any, None]:
    """The events of an SDK stream; a stream that breaks off after it began raises the scrubbed
    `ProviderError`, and the stream is closed however the reading ends (use it under `aclosing`)."""
    try:
        async for event in stream:
            yield event
    except asyncio.CancelledError:
        raise
    except AgentError:
        raise
    except Exception as error:  # noqa: BLE001 - the stream broke off after it began
        failure = provider_error(provider, request, error, secrets)
        raise failure from failure.__cause__
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            await close()
