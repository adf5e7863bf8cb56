"""The catalogue of sample threads: their ids, file names, machines and what each shows.

regenerate.py records them, generate.py writes the generated ones, the README table is rendered from here. Only
data: importing this module records, writes and imports nothing beyond the sample machines' modules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..eventlog.machine_ref import import_machine
from .long_run import INBOX_REF

__all__ = ["DIVERGENCE_INDEX", "LONG_RUN_THREAD", "LONG_RUN_TICKETS", "SAMPLES", "SUPPORT", "Sample", "jsonl_name"]

#: 20,000 tickets: 100,001 entries in the long run.
LONG_RUN_TICKETS = 20_000
#: Where support-divergent first diverges from today's support_agent: the OFFER_REFUND decision the old
#: refund policy accepted (lookup, classify + usage, draft + usage precede it).
DIVERGENCE_INDEX = 6

SUPPORT = "agent_explorer.samples.support"
#: The thread that is generated on first use rather than committed.
LONG_RUN_THREAD = "inbox-long"


@dataclass(frozen=True)
class Sample:
    """One thread of the sample store: its id, the machine it verifies against, and what it shows."""

    thread_id: str
    machine_ref: str
    shows: str
    diverges_at: int | None = None

    @property
    def machine(self) -> Any:
        """The machine `machine_ref` ("module:attribute") names, imported (a sample: no consent needed)."""
        return import_machine(self.machine_ref)


SAMPLES: tuple[Sample, ...] = (
    Sample("support-clean", f"{SUPPORT}:support_agent",
           "A clean support run: order lookup (tool), classification and draft (two models), a model decision to "
           "offer a refund, idle in `awaitingApproval` until a reviewer's `APPROVE` 20 minutes later, the refund "
           "tool, the final reply. The run `agent-explorer open` shows."),
    Sample("support-crashed", f"{SUPPORT}:support_agent",
           "The process died while the `draft#1` request was in flight: the log ends after the classification. "
           "It verifies; `replay(...).effects` lists the owed `draft#1`, which a resume re-executes."),
    Sample("support-divergent", f"{SUPPORT}:support_agent",
           "Recorded by `support_agent_old_policy` (refund limit 250.00) under the same id and version \"1\" as today's "
           "machine (limit 150.00): the guard changed without a version bump. It diverges at the `OFFER_REFUND` "
           "decision.", diverges_at=DIVERGENCE_INDEX),
    Sample("support-bridge-v1", f"{SUPPORT}:support_agent",
           "Version-bridge pair, part 1: a version-1 run left idle waiting for approval."),
    Sample("support-bridge-v2", f"{SUPPORT}:support_agent_v2",
           "Version-bridge pair, part 2: the new segment. Its init entry carries the v1 snapshot migrated by "
           "`support_agent_v2.migrate` (`approval` became `approvals`) and `metadata.migratedFrom`; then `APPROVE`, "
           "the refund and the reply under version 2."),
    Sample("support-whatif", f"{SUPPORT}:support_agent",
           "A what-if branch: `support-clean` forked just before the `APPROVE`, with a `REJECT` appended instead. The "
           "agent drafts again; the model's `OFFER_REFUND` is refused by the guard and retried as `SEND_REPLY`."),
    Sample("support-ignored", f"{SUPPORT}:support_agent",
           "Ignored events: two `CUSTOMER_REPLIED` messages arrive while the agent waits for approval (no transition "
           "handles them; journaled all the same, and replay ignores them again). Nobody approves, so the 4-hour "
           "`after` timer fires and escalates the ticket."),
    Sample("research-race", "agent_explorer.samples.research:research_agent",
           "A fan-out: three spawned investigator branches in flight at once, completing in the order branch2, "
           "branch0, branch1 (not spawn order); the log's order is the serialization replay follows."),
    Sample("planner-trip", "agent_explorer.samples.planner:planner_agent",
           "A plan (docs/semantics/step-path.md): the model books a flight, a hotel and activities one move at a time; "
           "a booking over budget is refused by the guard and retried; `agent.plan.done` completes the plan with "
           "`{steps, stopped}`."),
    Sample("inbox-long", INBOX_REF,
           "The long run: 20,000 tickets classified and routed, 100,001 entries, to feel how scrubbing and "
           "verification scale. Written by the fast path of `long_run.py` (the same entries `run_agent` records)."),
)


def jsonl_name(thread_id: str) -> str:
    return thread_id.replace("-", "_") + ".jsonl"
