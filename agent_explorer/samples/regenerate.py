"""Record every sample run for real and write `sample_logs/`: the committed JSONL files, then the generated ones.

    python -m agent_explorer.samples.regenerate [--out DIR] [--tickets N]

Each scenario drives a sample machine through `run_agent` with scripted models, an injected clock and readable
ids, against a scratch SQLite store; the JSONL files are exported from it byte for byte, README.md is written from
the same table, and `ensure_samples` then writes the long run and the sample store (which are not committed) and
the long run's digest (which is). Everything is deterministic: running it twice gives identical files. It only
ever writes the files it names in `out`. Run it when recorded output really changes, and commit the result.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..errors import AgentError
from ..eventlog import bridge_version, read_log, verify_log
from ..runtime import AgentRequest, parse_agent_event, run_agent
from ..stores.copy import export_thread_jsonl
from ..stores.sqlite import SqliteEventLogStore
from .catalog import DIVERGENCE_INDEX, LONG_RUN_THREAD, LONG_RUN_TICKETS, SAMPLES, SUPPORT, Sample, jsonl_name
from .clock import SampleClock, entry_ids
from .generate import GENERATED_FILES, LONG_RUN_FILE, STAMP, STORE_FILE, ensure_samples
from .long_run import entries_for_tickets
from .models import FinishOrder, ModelRouter, scripted
from .planner import PLANNER_MODEL, planner_agent
from .research import BRANCH_MODEL, RESEARCH_MODEL, research_agent, sub_questions
from .shipped import GOLDEN_FILES, checkout_root
from .support import (
    LARGE_MODEL,
    SMALL_MODEL,
    support_agent,
    support_agent_old_policy,
    support_agent_v2,
)
from .triage import TRIAGE_THREADS

__all__ = ["DIVERGENCE_INDEX", "LONG_RUN_TICKETS", "SAMPLES", "Sample", "jsonl_name", "main", "regenerate"]

# -- scenario helpers --------------------------------------------------------------------------------------------


class CrashAt:
    """Executor wrapper: a call for `site` never returns and sets `in_flight`, so the host can die mid-request."""

    def __init__(self, inner: ModelRouter, site: str) -> None:
        self.inner = inner
        self.site = site
        self.in_flight = asyncio.Event()

    async def generate_text(self, request: AgentRequest) -> Any:
        if request.site == self.site:
            self.in_flight.set()
            await asyncio.Event().wait()  # the provider is still thinking when the process dies
        return await self.inner.generate_text(request)

    async def decide(self, request: AgentRequest) -> Any:
        return await self.inner.decide(request)


def _ticket(number: int, customer: str, subject: str, body: str, order_id: str) -> dict[str, Any]:
    return {"ticket": {"id": f"T-{number}", "customer": customer, "subject": subject, "body": body, "orderId": order_id}}


def _support_models(small: list[str], large: list[str], decisions: list[Any]) -> ModelRouter:
    return ModelRouter(
        {SMALL_MODEL: scripted(SMALL_MODEL, small), LARGE_MODEL: scripted(LARGE_MODEL, large, decisions)},
        default=LARGE_MODEL,
    )


async def _check(result: Any, status: str, what: str) -> Any:
    await result.drain()
    if result.status != status:
        raise AgentError(
            f"sample {what}: the run settled {result.status!r} (cause {result.cause!r}: {result.error!r}), "
            f"expected {status!r}",
            code="sample-run-failed",
        )
    return result


def _after(entry: dict[str, Any], **delta: float) -> datetime:
    return datetime.fromisoformat(entry["recordedAt"]) + timedelta(**delta)


# -- the scenarios -------------------------------------------------------------------------------------------------

CLEAN_TICKET = _ticket(1042, "Dana Whitfield", "Backpack arrived torn",
                       "The left strap of my new backpack tore the first time I wore it. Order A-5531.", "A-5531")
CLEAN_DRAFT = ("Hi Dana, I'm sorry your Trailhead backpack arrived torn. That should never happen; "
               "I'd like to refund the full 89.00 EUR.")


async def support_clean(store: Any) -> None:
    thread = "support-clean"
    clock, ids = SampleClock(), entry_ids(thread)
    models = _support_models(
        ["Product"],
        [CLEAN_DRAFT, "Hi Dana, your refund of 89.00 EUR (RF-A-5531) is on its way; it shows up in 3-5 days."],
        ["OFFER_REFUND"],
    )
    ref = f"{SUPPORT}:support_agent"
    await _check(await run_agent(support_agent, input=CLEAN_TICKET, store=store, thread_id=thread, executors=models,
                                 now=clock, ids=ids, machine_ref=ref), "idle", thread)
    clock.advance(minutes=20)
    approve = parse_agent_event(support_agent, {"type": "APPROVE", "approver": "sam.k", "note": "Torn strap, photo checks out."})
    await _check(await run_agent(support_agent, store=store, thread_id=thread, event=approve, executors=models,
                                 now=clock, ids=ids), "done", thread)


async def support_crashed(store: Any) -> None:
    thread = "support-crashed"
    clock, ids = SampleClock(), entry_ids(thread)
    ticket = _ticket(1043, "Ravi Menon", "Stove kit 9 days late",
                     "My camp stove kit arrived 9 days after the promised date; I missed my trip.", "A-7007")
    crashing = CrashAt(_support_models(["Shipping"], [], []), "draft")
    run = asyncio.ensure_future(run_agent(support_agent, input=ticket, store=store, thread_id=thread,
                                          executors=crashing, now=clock, ids=ids, machine_ref=f"{SUPPORT}:support_agent"))
    await crashing.in_flight.wait()
    run.cancel()  # the host process dies here: only what was durable before the call survives
    with contextlib.suppress(asyncio.CancelledError):
        await run


async def support_divergent(store: Any) -> None:
    thread = "support-divergent"
    clock, ids = SampleClock(), entry_ids(thread)
    ticket = _ticket(1044, "Lena Okafor", "Jacket: wrong size",
                     "I ordered the Summit jacket in M and received an XL. I'd rather have my money back.", "A-6120")
    models = _support_models(
        ["Product"],
        ["Hi Lena, sorry we sent the wrong size of your Summit jacket. I can refund the 189.00 EUR right away.",
         "Hi Lena, your refund of 189.00 EUR (RF-A-6120) is on its way."],
        ["OFFER_REFUND"],
    )
    # Recorded by the old policy's machine; the log names today's machine, as it did when it was recorded
    # (same module, same id, same version): nobody bumped the version when the guard changed.
    ref = f"{SUPPORT}:support_agent"
    await _check(await run_agent(support_agent_old_policy, input=ticket, store=store, thread_id=thread,
                                 executors=models, now=clock, ids=ids, machine_ref=ref), "idle", thread)
    clock.advance(minutes=12)
    approve = parse_agent_event(support_agent_old_policy, {"type": "APPROVE", "approver": "sam.k"})
    await _check(await run_agent(support_agent_old_policy, store=store, thread_id=thread, event=approve,
                                 executors=models, now=clock, ids=ids), "done", thread)


async def support_bridge(store: Any) -> None:
    v1, v2 = "support-bridge-v1", "support-bridge-v2"
    clock, ids = SampleClock(), entry_ids(v1)
    ticket = _ticket(1045, "Tomás Ferreira", "Stove kit late, want refund",
                     "The stove kit came over a week late. Can I get a refund?", "A-7007")
    models = _support_models(
        ["Shipping"],
        ["Hi Tomás, sorry the stove kit was so late. I can refund the 64.50 EUR.",
         "Hi Tomás, your refund of 64.50 EUR (RF-A-7007) is on its way."],
        ["OFFER_REFUND"],
    )
    first = await _check(await run_agent(support_agent, input=ticket, store=store, thread_id=v1, executors=models,
                                         now=clock, ids=ids, machine_ref=f"{SUPPORT}:support_agent"), "idle", v1)
    # Version 2 is deployed while the ticket waits: the new segment starts from the migrated snapshot.
    clock.advance(hours=1)
    v2_ids = entry_ids(v2)
    segment = bridge_version(
        support_agent_v2,
        first.events,
        support_agent.get_persisted_snapshot(first.snapshot),
        log_id=v1,
        metadata={"executionId": v2_ids(), "machineRef": f"{SUPPORT}:support_agent_v2"},
        now=clock,
        id=v2_ids(),
    )
    await store.append(thread_id=v2, expected_index=0, entries=segment)
    clock.advance(minutes=5)
    approve = parse_agent_event(support_agent_v2, {"type": "APPROVE", "approver": "ines.b", "note": "Late delivery, refund ok."})
    await _check(await run_agent(support_agent_v2, store=store, thread_id=v2, event=approve, executors=models,
                                 now=clock, ids=v2_ids), "done", v2)


async def support_whatif(store: Any) -> None:
    thread = "support-whatif"
    parent = await store.read("support-clean")
    at = next(e["index"] for e in parent if e["event"]["type"] == "APPROVE")
    await store.fork(thread_id="support-clean", new_thread_id=thread, up_to_index=at)
    clock = SampleClock(start=_after(parent[at - 1], minutes=25))
    models = _support_models(
        [],
        [("Hi Dana, I'm sorry about the torn strap. We'll send a free replacement strap today; no need to return "
         "the backpack."), "Hi Dana, a replacement strap ships today (tracking follows by email)."],
        ["OFFER_REFUND", "SEND_REPLY"],
    )
    reject = parse_agent_event(support_agent, {"type": "REJECT", "approver": "sam.k",
                                                "reason": "Strap defects get a free replacement strap, not a refund."})
    await _check(await run_agent(support_agent, store=store, thread_id=thread, event=reject, executors=models,
                                 now=clock, ids=entry_ids(thread)), "done", thread)


async def support_ignored(store: Any) -> None:
    thread = "support-ignored"
    clock, ids = SampleClock(), entry_ids(thread)
    ticket = _ticket(1046, "Mia Chen", "Backpack strap torn",
                     "Same problem as my friend's: the strap tore on day one.", "A-5531")
    models = _support_models(["Product"], ["Hi Mia, sorry about the strap. I can refund the 89.00 EUR."], ["OFFER_REFUND"])
    waiting = await _check(await run_agent(support_agent, input=ticket, store=store, thread_id=thread, executors=models,
                                           now=clock, ids=ids, machine_ref=f"{SUPPORT}:support_agent"), "idle", thread)
    entered = waiting.events[-1]
    for minutes, text in ((35, "Any update on my refund?"), (130, "Hello?? Still waiting.")):
        clock = SampleClock(start=_after(entered, minutes=minutes))
        message = {"type": "CUSTOMER_REPLIED", "text": text}
        result = await _check(await run_agent(support_agent, store=store, thread_id=thread, event=message,
                                              executors=models, now=clock, ids=ids), "idle", thread)
        if result.ignored is None:
            raise AgentError(f"sample {thread}: {message} was not ignored", code="sample-run-failed")
    # Nobody approved: the host's timer fires four hours after the agent started waiting.
    (timer,) = [effect for effect in result.owed if effect.kind == "delay"]
    clock = SampleClock(start=_after(entered, milliseconds=float(timer.delay or 0)))
    await _check(await run_agent(support_agent, store=store, thread_id=thread, event=timer.event, executors=models,
                                 now=clock, ids=ids), "done", thread)


RESEARCH_QUESTION = "Is it worth switching our support inbox from email to a chat widget?"
RESEARCH_OUTLINE = (
    "1. What response times do chat widgets achieve compared with email?\n"
    "2. How does chat change the cost per resolved ticket?\n"
    "3. What do customers report about satisfaction with chat versus email?"
)


async def research_race(store: Any) -> None:
    thread = "research-race"
    clock, ids = SampleClock(), entry_ids(thread)
    findings = [
        "Chat answers in about 2 minutes on median; email in about 12 hours.",
        "Chat costs roughly 30% less per resolved ticket, because agents handle 2-3 chats at once.",
        "Satisfaction is higher for chat on simple questions and equal on complex ones.",
    ]
    branch_answers = {
        f"Investigate: {topic} (for the question: {RESEARCH_QUESTION})": finding
        for topic, finding in zip(sub_questions(RESEARCH_OUTLINE), findings, strict=True)
    }
    models = ModelRouter(
        {
            RESEARCH_MODEL: scripted(RESEARCH_MODEL, [RESEARCH_OUTLINE,
                                                      ("Yes, for simple questions: chat is faster, cheaper per ticket, "
                                                      "and customers like it at least as much. Keep email for complex cases.")]),
            BRANCH_MODEL: scripted(BRANCH_MODEL, branch_answers),
        },
        finish_order=FinishOrder(["branch2", "branch0", "branch1"]),
    )
    await _check(await run_agent(research_agent, input={"question": RESEARCH_QUESTION}, store=store, thread_id=thread,
                                 executors=models, now=clock, ids=ids,
                                 machine_ref="agent_explorer.samples.research:research_agent"), "done", thread)


async def planner_trip(store: Any) -> None:
    thread = "planner-trip"
    clock, ids = SampleClock(), entry_ids(thread)
    moves = [
        {"type": "BOOK_FLIGHT", "what": "Berlin → Lisbon, Fri 18:05, back Sun 20:40", "costCents": 21800},
        {"type": "BOOK_HOTEL", "what": "2 nights, guesthouse in Alfama", "costCents": 34000},
        {"type": "ADD_ACTIVITY", "what": "Private fado dinner for two", "costCents": 60000},  # over budget: refused
        {"type": "ADD_ACTIVITY", "what": "Tram 28 and Castelo de São Jorge", "costCents": 3900},
        {"type": "ADD_ACTIVITY", "what": "Day trip to Sintra", "costCents": 8800},
        "agent.plan.done",
    ]
    models = ModelRouter({PLANNER_MODEL: scripted(
        PLANNER_MODEL,
        [("Friday: fly in at 21:50, walk up to Alfama. Saturday: tram 28, the castle, dinner by the river. "
         "Sunday: Sintra, back for the 20:40 flight.")],
        moves,
    )})
    trip = {"trip": {"destination": "Lisbon", "travellers": "2 adults"}, "budgetCents": 80000}
    await _check(await run_agent(planner_agent, input=trip, store=store, thread_id=thread, executors=models,
                                 now=clock, ids=ids, machine_ref="agent_explorer.samples.planner:planner_agent"),
                 "done", thread)


# -- writing sample_logs/ -----------------------------------------------------------------------------------------

SCENARIOS: tuple[tuple[str, Callable[[Any], Awaitable[None]]], ...] = (
    ("support-clean", support_clean),
    ("support-crashed", support_crashed),
    ("support-divergent", support_divergent),
    ("support-bridge", support_bridge),
    ("support-whatif", support_whatif),
    ("support-ignored", support_ignored),
    ("research-race", research_race),
    ("planner-trip", planner_trip),
)
#: Everything regenerate writes into `out` (and so may remove first); nothing else there is touched.
OWNED_FILES = (*GOLDEN_FILES, *GENERATED_FILES, f"{STORE_FILE}-wal", f"{STORE_FILE}-shm", STAMP)
DIGEST_FILE = "inbox_long.sha256"


@contextlib.asynccontextmanager
async def _fresh_store(path: Path) -> AsyncIterator[SqliteEventLogStore]:
    # NORMAL: a scratch store, thrown away after the export, so per-commit fsyncs buy nothing here.
    store = SqliteEventLogStore(path, synchronous="NORMAL")
    try:
        yield store
    finally:
        await store.aclose()


def _clear(out: Path) -> None:
    for name in (*OWNED_FILES, *(jsonl_name(s.thread_id) for s in SAMPLES)):
        (out / name).unlink(missing_ok=True)


async def regenerate(out: Path, *, tickets: int = LONG_RUN_TICKETS, log: Callable[[str], Any] = print) -> dict[str, int]:
    """Record every sample into `out` (created if needed); return the entry count of each thread.

    The short runs are recorded into a scratch store and exported as the committed JSONL files; then the
    generated files (the long run, the sample store) are written from them by `ensure_samples`, and the long
    run's digest is written beside them so a later generation can be checked against this one.
    """
    out.mkdir(parents=True, exist_ok=True)
    _clear(out)
    lengths: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="agent-explorer-record-") as scratch:
        async with _fresh_store(Path(scratch) / "record.db") as store:
            for name, scenario in SCENARIOS:
                log(f"recording {name}")
                await scenario(store)
            for sample in SAMPLES:
                if sample.thread_id != LONG_RUN_THREAD:
                    path = out / jsonl_name(sample.thread_id)
                    lengths[sample.thread_id] = await export_thread_jsonl(store, sample.thread_id, path)
    _check_divergence(out)
    (out / "README.md").write_text(render_readme(), encoding="utf-8")
    log(f"writing {LONG_RUN_THREAD} ({entries_for_tickets(tickets):,} entries) and the sample store")
    await asyncio.to_thread(ensure_samples, out, force=True, tickets=tickets, source=out)
    stamp = json.loads((out / STAMP).read_text(encoding="utf-8"))
    long_run = stamp["files"][LONG_RUN_FILE]
    (out / DIGEST_FILE).write_text(f"{long_run['sha256']}  {LONG_RUN_FILE}\n", encoding="utf-8")
    lengths[LONG_RUN_THREAD] = long_run["entries"]
    return lengths


def _check_divergence(out: Path) -> None:
    """The documented divergence index must be the real one (the README promises it)."""

    sample = next(s for s in SAMPLES if s.diverges_at is not None)
    report = verify_log(sample.machine, read_log(out / jsonl_name(sample.thread_id)))
    if report.first_divergence != sample.diverges_at:
        raise AgentError(
            f"{sample.thread_id} diverges at {report.first_divergence}, but DIVERGENCE_INDEX says "
            f"{sample.diverges_at}: update the constant (and the notebooks that cite it)",
            code="sample-run-failed",
        )


def render_readme() -> str:
    rows = "\n".join(
        f"| `{s.thread_id}` | `{jsonl_name(s.thread_id)}` | `{s.machine_ref.split(':')[1]}` | {s.shows} |"
        for s in SAMPLES
    )
    return f"""# Sample logs

Recorded by `python -m agent_explorer.samples.regenerate` (do not edit by hand): every run below went through
`run_agent` with scripted models, an injected clock and readable ids (the long run through its fast path, which
`tests/samples/` proves writes the same entries), so regenerating gives identical files; `tests/samples/` checks
that the committed files equal a fresh regeneration.

- `<thread>.jsonl`: one thread per file. These are committed (each under 100 KB) and ship inside the package.
- `inbox_long.jsonl` and `samples.db` are generated, not committed: `agent-explorer samples` (or
  `agent_explorer.samples.ensure_samples()`) writes them in a few seconds, deterministically, and skips the work
  when they are current. `samples.db` is one SQLite store holding every thread below
  (`SqliteEventLogStore("sample_logs/samples.db")`, or `agent-explorer threads --store sqlite:///sample_logs/samples.db`);
  `inbox_long.sha256` (committed) is the long run's digest, which a fresh generation must match.
- `triage.db` is generated too: a store of {TRIAGE_THREADS:,} support tickets of mixed fates (finished, waiting for
  approval, cut off while a request was in flight, escalated by the timer, and recorded under the old refund policy
  so they diverge under today's `support_agent`), each a support scenario below retold for another ticket and
  folded through the real engine (`agent_explorer/samples/triage.py`). Notebook 07 triages it with `Runs`.

Each log names its machine in the init entry (`metadata.machineRef`), so `agent-explorer verify FILE` needs no
`--machine`. Every log verifies except `support-divergent`, which diverges from today's `support_agent` at index
{DIVERGENCE_INDEX}, and the long run holds {entries_for_tickets(LONG_RUN_TICKETS):,} entries.

| thread | file | machine (`agent_explorer.samples`) | what it shows |
| --- | --- | --- | --- |
{rows}
"""


def _default_out() -> Path:
    root = checkout_root()
    if root is None:
        raise AgentError(
            "regenerate writes into a checkout's sample_logs/; this package is not run from one, so pass --out DIR",
            code="invalid-argument",
        )
    return root / "sample_logs"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agent_explorer.samples.regenerate", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="directory to write (default: the checkout's sample_logs/)")
    parser.add_argument("--tickets", type=int, default=LONG_RUN_TICKETS,
                        help=f"tickets in the long inbox run (default {LONG_RUN_TICKETS}; 5 entries each)")
    args = parser.parse_args(argv)
    try:
        out = args.out if args.out is not None else _default_out()
        lengths = asyncio.run(regenerate(out, tickets=args.tickets))
    except AgentError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for thread_id, length in lengths.items():
        print(f"{thread_id:20} {length:>8} entries  {out / jsonl_name(thread_id)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
