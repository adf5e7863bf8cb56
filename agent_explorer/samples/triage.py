"""The triage store's threads: a few thousand support runs of mixed fates, for the run list and notebook 07.

Each thread replays one of the committed support scenarios (its events, read from the shipped JSONL) for another
ticket: a customer, an item and an amount of its own, folded through the real engine (`transition`) and stamped
by `init_entry` / `create_replay_entry`, as `run_agent` journals them (long_run.py does the same for the inbox).
The fates: finished, waiting for approval (idle), cut off while the draft was in flight (a crash), escalated by the
approval timer, and recorded under the old refund policy with an amount only it accepts (diverging under today's
`support_agent`). Deterministic (no clock, no randomness); yields entries, writes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from ..engine import initial_transition, transition
from ..eventlog import create_replay_entry, init_entry
from .clock import EPOCH, SampleClock, entry_ids
from .support import support_agent, support_agent_old_policy

__all__ = ["FATES", "TRIAGE_THREADS", "Fate", "fate_of", "triage_thread_id", "triage_threads"]

#: How many threads the triage store holds (about 30,000 entries; a few seconds to write).
TRIAGE_THREADS = 3000

SUPPORT_REF = "agent_explorer.samples.support:support_agent"


@dataclass(frozen=True)
class Fate:
    """How one kind of triage thread ends: the committed scenario it replays and the machine that recorded it."""

    name: str
    template: str  # a shipped JSONL file: its events (not its hashes) are replayed for each ticket
    old_policy: bool  # recorded by support_agent_old_policy (refund limit 250.00), so today's machine diverges
    weight: int  # threads of this fate in every 20


FATES: tuple[Fate, ...] = (
    Fate("finished", "support_clean.jsonl", False, 11),
    Fate("waiting", "support_bridge_v1.jsonl", False, 4),
    Fate("crashed", "support_crashed.jsonl", False, 2),
    Fate("escalated", "support_ignored.jsonl", False, 1),
    Fate("diverging", "support_divergent.jsonl", True, 2),
)
_CYCLE = [fate for fate in FATES for _ in range(fate.weight)]

_CUSTOMERS = ("Dana Whitfield", "Lena Okafor", "Mia Chen", "Arjun Patel", "Sofia Rossi", "Tom Becker", "Yuki Sato",
              "Omar Haddad", "Grace Kim", "Lucas Moreau", "Nora Lindqvist", "Ivan Petrov", "Aisha Bello")
_ITEMS = (("Trailhead 40L backpack", "arrived torn"), ("Summit down jacket", "wrong size sent"),
          ("Ridge trekking poles", "one pole bent"), ("Alpine tent 2P", "missing poles"),
          ("Canyon water filter", "leaks"), ("Peak headlamp", "does not switch on"))


def triage_thread_id(n: int) -> str:
    return f"ticket-{n:05d}"


def fate_of(n: int) -> Fate:
    """The fate of ticket `n` (1-based): the weights of FATES, interleaved so every page of the list is mixed."""
    return _CYCLE[(n * 7) % len(_CYCLE)]


def _amount_cents(n: int, fate: Fate) -> int:
    # Today's limit is 150.00 and the old policy's 250.00: a diverging ticket sits between them, the rest within.
    if fate.old_policy:
        return 15_100 + (n * 37 % 90) * 100
    return 1_900 + (n * 53 % 130) * 100


def _ticket_events(template: list[dict[str, Any]], n: int, fate: Fate) -> list[dict[str, Any]]:
    """The template's events, retold for ticket n: its customer, item, order and amount."""
    customer = _CUSTOMERS[n % len(_CUSTOMERS)]
    first = customer.split()[0]
    item, problem = _ITEMS[n % len(_ITEMS)]
    order, amount = f"A-{10_000 + n}", _amount_cents(n, fate)
    money = f"{amount // 100}.{amount % 100:02d} EUR"
    events = []
    for event in template:
        kind = event["type"]
        if kind == "@agent.init":
            event = {"type": kind, "input": {"ticket": {
                "id": f"T-{20_000 + n}", "customer": customer, "subject": f"{item}: {problem}",
                "body": f"My {item} {problem}. Order {order}.", "orderId": order}}}
        elif kind == "xstate.done.actor.lookupOrder":
            event = {"type": kind, "output": {"orderId": order, "item": item, "amountCents": amount, "status": problem}}
        elif kind == "xstate.done.actor.draft":
            event = {"type": kind, "output": {"text": f"Hi {first}, sorry your {item} {problem}. "
                                                       f"I can refund the {money} right away."}}
        elif kind == "xstate.done.actor.issueRefund":
            event = {"type": kind, "output": {"refundId": f"RF-{order}", "amountCents": amount, "status": "issued"}}
        elif kind == "xstate.done.actor.finalReply":
            event = {"type": kind, "output": {"text": f"Hi {first}, your refund of {money} (RF-{order}) is on its way."}}
        events.append(event)
    return events


def _read_template(folder: Path, name: str) -> list[tuple[dict[str, Any], str | None, float]]:
    """(event, causation id, seconds since the previous entry) of each entry of a shipped scenario."""
    from datetime import datetime

    rows, previous = [], None
    for line in (folder / name).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        moment = datetime.fromisoformat(entry["recordedAt"].replace("Z", "+00:00"))
        gap = 0.0 if previous is None else (moment - previous).total_seconds()
        previous = moment
        rows.append((entry["event"], entry.get("causationId"), gap))
    return rows


def triage_threads(folder: Path, count: int = TRIAGE_THREADS) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Yield (thread id, entries) for tickets 1..count, replaying the shipped scenarios found in `folder`."""
    templates = {fate.name: _read_template(folder, fate.template) for fate in FATES}
    for n in range(1, count + 1):
        fate = fate_of(n)
        thread_id = triage_thread_id(n)
        machine = support_agent_old_policy if fate.old_policy else support_agent
        template = templates[fate.name]
        events = _ticket_events([event for event, _, _ in template], n, fate)
        # Tickets arrive about four minutes apart (plus n milliseconds, so no two runs end at the same instant
        # and "newest first" is one order).
        clock = SampleClock(start=EPOCH + timedelta(minutes=4 * n, milliseconds=n))
        ids = entry_ids(thread_id)
        execution_id = ids()
        snapshot, _ = initial_transition(machine, events[0]["input"])
        entries = [init_entry(machine, input=events[0]["input"],
                              # The old policy shipped under today's name, id and version (the bug the
                              # diverging threads show): its logs name the same machine.
                              metadata={"executionId": execution_id, "machineRef": SUPPORT_REF},
                              now=clock, id=ids())]
        for index, (event, (_, causation, gap)) in enumerate(zip(events[1:], template[1:], strict=True), start=1):
            if gap > 5:
                clock.advance(seconds=gap - 0.85)  # a person's or a timer's pause, as the scenario recorded it
            snapshot, _ = transition(machine, snapshot, event)
            entries.append(create_replay_entry(machine, event, index, snapshot_after=snapshot,
                                               causation_id=causation, now=clock, id=ids()))
        yield thread_id, entries
