"""Scripted model hosts for the sample runs: several named models behind one executor, and a race referee.

`ModelRouter` sends each request to the `ScriptedModel` named by the request's `model` (the actor logic's
`model=`), so one run bills two models and the usage records say which; `FinishOrder` makes racing calls
complete in a scripted order without sleeping, so a raced run records the same serialization on every
regeneration, however loaded the machine is. Nothing here touches a log, a store or a clock.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ..errors import AgentError
from ..runtime import AgentRequest, ScriptedModel
from ..runtime.executors import prompt_key

__all__ = ["FinishOrder", "ModelRouter", "scripted", "token_usage"]


def token_usage(request: AgentRequest, text: str) -> dict[str, int]:
    """What a scripted call bills: about four characters a token, plus a fixed system prompt of 350 tokens.

    A pure function of the prompt and the answer, so usage varies realistically between calls and a
    regenerated run bills exactly the same.
    """
    input_tokens = 350 + len(prompt_key(request.prompt)) // 4
    output_tokens = 1 + len(text) // 4
    return {"inputTokens": input_tokens, "outputTokens": output_tokens, "totalTokens": input_tokens + output_tokens}


def scripted(model: str, responses: Any = (), decisions: Any = ()) -> ScriptedModel:
    """A `ScriptedModel` named `model` that bills `token_usage` for every answer."""
    return ScriptedModel(responses, decisions=decisions, usage=token_usage, model=model)


class FinishOrder:
    """Lets calls finish only in the order of `sites` (actor ids); calls of other sites pass straight through.

    A call for `sites[k]` waits until the calls for `sites[:k]` have returned. The run journals completions in
    arrival order, so this order is exactly the serialization the log records: the race is real (the calls
    are all in flight together), its outcome is scripted.
    """

    def __init__(self, sites: Sequence[str]) -> None:
        self.sites = list(sites)
        self._done: dict[str, asyncio.Event] = {}

    def _event(self, site: str) -> asyncio.Event:
        # Created lazily, inside the run's event loop.
        return self._done.setdefault(site, asyncio.Event())

    async def before(self, site: str) -> None:
        if site not in self.sites:
            return
        for earlier in self.sites[: self.sites.index(site)]:
            await self._event(earlier).wait()

    def after(self, site: str) -> None:
        if site in self.sites:
            self._event(site).set()


class ModelRouter:
    """The executor protocol (`generate_text`, `stream_text`, `decide`) over named `ScriptedModel`s.

    A request whose logic names no model goes to `default`. `calls` lists every request executed, in order,
    across all models: a replay that executes nothing leaves it unchanged.
    """

    def __init__(
        self, models: Mapping[str, ScriptedModel], *, default: str | None = None, finish_order: FinishOrder | None = None
    ) -> None:
        if not models:
            raise AgentError("ModelRouter needs at least one model", code="invalid-argument")
        self.models = dict(models)
        self.default = default if default is not None else next(iter(self.models))
        self.finish_order = finish_order
        self.calls: list[AgentRequest] = []

    def _model_for(self, request: AgentRequest) -> ScriptedModel:
        name = request.model or self.default
        try:
            return self.models[name]
        except KeyError:
            raise AgentError(
                f"request {request.request_id} asks for model {name!r}, but the router only has "
                f"{sorted(self.models)}",
                code="invalid-argument",
                request_id=request.request_id,
            ) from None

    async def generate_text(self, request: AgentRequest) -> dict[str, Any]:
        model = self._model_for(request)
        self.calls.append(request)
        if self.finish_order is not None:
            await self.finish_order.before(request.site)
        try:
            return await model.generate_text(request)
        finally:
            if self.finish_order is not None:
                self.finish_order.after(request.site)

    async def stream_text(self, request: AgentRequest) -> AsyncIterator[Any]:
        self.calls.append(request)
        async for chunk in self._model_for(request).stream_text(request):
            yield chunk

    async def decide(self, request: AgentRequest) -> dict[str, Any]:
        self.calls.append(request)
        return await self._model_for(request).decide(request)
