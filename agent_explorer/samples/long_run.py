"""The long inbox run, written two ways: through `run_agent` (the reference), and by a fast path for scale.

`run_agent` resumes a thread by reading and re-verifying its whole log, so driving 20,000 tickets through it one
event at a time costs O(n^2). `long_run_entries` instead folds the same inputs through the real engine
(`transition`) and stamps each entry with `init_entry` / `create_replay_entry`, exactly as `run_agent` journals
them (same order, causation ids `site#occurrence`, usage records, clock, ids); the samples test checks the two are
byte-identical on a prefix. Nothing here runs a model or writes a file: it yields entries.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from ..engine import initial_transition, transition
from ..errors import AgentError
from ..eventlog import create_replay_entry, init_entry
from ..runtime import AgentRequest, run_agent
from .clock import SampleClock, entry_ids
from .inbox import (
    INBOX_ROUTER_MODEL,
    INBOX_SMALL_MODEL,
    classify_prompt,
    inbox_agent,
    inbox_answers,
    inbox_ticket,
    route_prompt,
    ticket_gap_seconds,
)
from .models import ModelRouter, scripted, token_usage

__all__ = ["INBOX_REF", "entries_for_tickets", "long_run_entries", "record_inbox_with_run_agent"]

INBOX_REF = "agent_explorer.samples.inbox:inbox_agent"


def entries_for_tickets(tickets: int) -> int:
    """How many entries a run of `tickets` tickets holds: the init entry plus five per ticket."""
    return 1 + 5 * tickets


def _usage(request_id: str, model: str, prompt: str, text: str) -> dict[str, Any]:
    request = AgentRequest(kind="text", request_id=request_id, site=request_id.split("#")[0], occurrence=0, prompt=prompt)
    return {"type": "@agent.usage", "requestId": request_id, "model": model, "usage": token_usage(request, text)}


def long_run_entries(tickets: int, thread_id: str = "inbox-long") -> Iterator[dict[str, Any]]:
    """Yield the log of an inbox run over `tickets` tickets, as `record_inbox_with_run_agent` records it."""
    clock = SampleClock()
    ids = entry_ids(thread_id)
    machine = inbox_agent
    execution_id = ids()  # run_agent draws the execution id first, then the init entry's id
    snapshot, _ = initial_transition(machine)
    yield init_entry(machine, metadata={"executionId": execution_id, "machineRef": INBOX_REF}, now=clock, id=ids())
    index = 1

    def entry(event: dict[str, Any], after: Any, causation: str | None, now: Callable[[], datetime]) -> dict[str, Any]:
        nonlocal index
        made = create_replay_entry(machine, event, index, snapshot_after=after, causation_id=causation, now=now, id=ids())
        index += 1
        return made

    for n in range(1, tickets + 1):
        clock.advance(seconds=ticket_gap_seconds(n))
        queue, route = inbox_answers(n)
        snapshot, _ = transition(machine, snapshot, inbox_ticket(n))
        yield entry(inbox_ticket(n), snapshot, None, clock)

        classify_id = f"classify#{n}"
        prompt = classify_prompt(snapshot.context, None)
        snapshot, _ = transition(machine, snapshot, {"type": "xstate.done.actor.classify", "output": {"text": queue}})
        yield entry({"type": "xstate.done.actor.classify", "output": {"text": queue}}, snapshot, classify_id, clock)
        yield entry(_usage(classify_id, INBOX_SMALL_MODEL, prompt, queue), snapshot, classify_id, clock)

        route_id = f"route#{n}"
        prompt = route_prompt(snapshot.context, None)
        snapshot, _ = transition(machine, snapshot, {"type": route})
        yield entry({"type": route}, snapshot, route_id, clock)
        yield entry(_usage(route_id, INBOX_ROUTER_MODEL, prompt, json.dumps(route)), snapshot, route_id, clock)


async def record_inbox_with_run_agent(tickets: int, store: Any, thread_id: str = "inbox-long") -> list[dict[str, Any]]:
    """The reference: the same run, one `run_agent` call per ticket against `store` (O(n^2); keep n small)."""
    clock = SampleClock()
    ids = entry_ids(thread_id)
    answers = [inbox_answers(n) for n in range(1, tickets + 1)]
    router = ModelRouter(
        {
            INBOX_SMALL_MODEL: scripted(INBOX_SMALL_MODEL, [queue for queue, _ in answers]),
            INBOX_ROUTER_MODEL: scripted(INBOX_ROUTER_MODEL, decisions=[route for _, route in answers]),
        }
    )
    result = await run_agent(inbox_agent, store=store, thread_id=thread_id, executors=router, now=clock, ids=ids,
                             machine_ref=INBOX_REF)
    for n in range(1, tickets + 1):
        clock.advance(seconds=ticket_gap_seconds(n))
        result = await run_agent(inbox_agent, store=store, thread_id=thread_id, event=inbox_ticket(n),
                                 executors=router, now=clock, ids=ids)
        if result.status != "idle":
            raise AgentError(
                f"the inbox run on thread {thread_id!r} settled {result.status!r} at ticket {n}: {result.error!r}",
                code="sample-run-failed",
            )
    return list(result.events)
