"""The scripted hosts of the samples: a race referee whose outcome does not depend on timing, and a model router."""

from __future__ import annotations

from typing import Any

import pytest

from agent_explorer.errors import AgentError
from agent_explorer.runtime import AgentRequest, ScriptedModel, run_agent
from agent_explorer.samples import research_agent
from agent_explorer.samples.models import (
    FinishOrder,
    ModelRouter,
    scripted,
    token_usage,
)
from agent_explorer.samples.research import BRANCH_MODEL, RESEARCH_MODEL


class SlowFirst(ScriptedModel):
    """A provider whose latency favours spawn order: branch0 answers fastest, branch2 slowest."""

    async def _wait(self, request: AgentRequest) -> None:
        import asyncio

        await asyncio.sleep({"branch0": 0.0, "branch1": 0.01, "branch2": 0.02}.get(request.site, 0.0))


def _research_router(order: list[str]) -> ModelRouter:
    branches = SlowFirst(["finding 1", "finding 2", "finding 3"], usage=token_usage, model=BRANCH_MODEL)
    outline = "1. a\n2. b\n3. c"
    return ModelRouter(
        {RESEARCH_MODEL: scripted(RESEARCH_MODEL, [outline, "answer"]), BRANCH_MODEL: branches},
        finish_order=FinishOrder(order),
    )


@pytest.mark.parametrize("order", [["branch2", "branch0", "branch1"], ["branch1", "branch2", "branch0"]])
async def test_finish_order_decides_the_race_whatever_the_latencies(order: list[str]) -> None:
    result = await run_agent(research_agent, input={"question": "q"}, executors=_research_router(order))
    assert result.status == "done"
    assert result.output["arrivals"] == order
    assert not any(t.startswith("xstate.error") for t in (e["event"]["type"] for e in result.events))


async def test_the_router_bills_each_call_to_the_model_that_answered() -> None:
    router = _research_router(["branch0", "branch1", "branch2"])
    result = await run_agent(research_agent, input={"question": "q"}, executors=router)
    models = {e["event"]["requestId"]: e["event"]["model"] for e in result.events if e["event"]["type"] == "@agent.usage"}
    assert models == {"outline#1": RESEARCH_MODEL, "branch0#1": BRANCH_MODEL, "branch1#1": BRANCH_MODEL,
                      "branch2#1": BRANCH_MODEL, "synthesize#1": RESEARCH_MODEL}
    assert len(router.calls) == 5


def test_a_request_for_an_unknown_model_names_the_model_and_the_request() -> None:
    router = ModelRouter({"a": scripted("a")})
    request: Any = AgentRequest(kind="text", request_id="x#1", site="x", occurrence=1, model="b")
    with pytest.raises(AgentError, match="'b'.*x#1|x#1.*'b'"):
        router._model_for(request)
