"""Machines and log builders the replay tests share: a real engine machine shaped like an agent.

The agent loops idle -> thinking (invoke "draft") -> deciding (guards on context and on an
injected clock, an `after` timeout) -> acting (invoke "lookup") -> idle, with error and cancel
paths, a history capped at 20 items, and a final state. `record()` folds events live with the
engine and journals them with the real entry builders, exactly as a host would.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from agent_explorer.engine import assign, from_promise, initial_transition, setup, transition
from agent_explorer.eventlog.entries import create_replay_entry, init_entry

HISTORY_CAP = 20
DECIDE_TIMEOUT_MS = 60_000
TIMEOUT_EVENT = f"xstate.after.{DECIDE_TIMEOUT_MS}.agent.deciding"


async def _never(input: Any = None) -> Any:  # actors never run under the pure API
    raise AssertionError("the pure fold must not run actors")


def _append(history: list[Any], item: Any) -> list[Any]:
    return [*history, item][-HISTORY_CAP:]


def agent_machine(*, clock: Callable[[], float] | None = None, version: str | None = None,
                  approve_window: float = 1_000.0, migrate: Callable[..., Any] | None = None) -> Any:
    """The shared agent machine. `clock` is read by the `withinWindow` guard: the Date.now()
    hazard of docs/semantics/event-log.md "Hazards", made deterministic by injecting it.
    `version=None` keeps the structural hash as the machine version, which does not change when
    only the clock does."""
    now = clock or (lambda: 0.0)
    config: dict[str, Any] = {
        "id": "agent",
        "context": lambda input: {
            "question": (input or {}).get("question", ""),
            "history": [],
            "drafts": 0,
            "approved": 0,
            "errors": 0,
            "answer": None,
        },
        "initial": "idle",
        "states": {
            "idle": {
                "on": {
                    "ASK": {"target": "thinking", "actions": "recordQuestion"},
                    "STOP": {"target": "stopped"},
                },
            },
            "thinking": {
                "invoke": {
                    "id": "draft",
                    "src": "draft",
                    "input": lambda context, event, params: {"question": context["question"]},
                    "onDone": {"target": "deciding", "actions": "recordDraft"},
                    "onError": {"target": "idle", "actions": "recordError"},
                },
                "on": {"CANCEL": {"target": "idle", "actions": "recordCancel"}},
            },
            "deciding": {
                "after": {DECIDE_TIMEOUT_MS: {"target": "idle", "actions": "recordTimeout"}},
                "on": {
                    "APPROVE": [
                        {"guard": "withinWindow", "target": "acting", "actions": "recordApprove"},
                        {"target": "idle", "actions": "recordLate"},
                    ],
                    "REJECT": {"target": "thinking", "actions": "recordReject"},
                },
            },
            "acting": {
                "invoke": {
                    "id": "lookup",
                    "src": "lookup",
                    "input": lambda context, event, params: {"answer": context["answer"]},
                    "onDone": {"target": "idle", "actions": "recordLookup"},
                    "onError": {"target": "idle", "actions": "recordError"},
                },
            },
            "stopped": {"type": "final"},
        },
        "output": lambda context, event, params: {"approved": context["approved"], "drafts": context["drafts"]},
    }
    if version is not None:
        config["version"] = version
    if migrate is not None:
        config["migrate"] = migrate
    return setup(
        guards={"withinWindow": lambda context, event, params: now() <= approve_window},
        actions={
            "recordQuestion": assign(lambda c, e, p: {
                "question": e.get("text", ""), "history": _append(c["history"], {"ask": e.get("text", "")})}),
            "recordDraft": assign(lambda c, e, p: {
                "answer": (e.get("output") or {}).get("text"), "drafts": c["drafts"] + 1,
                "history": _append(c["history"], {"draft": (e.get("output") or {}).get("text")})}),
            "recordError": assign(lambda c, e, p: {"errors": c["errors"] + 1}),
            "recordCancel": assign(lambda c, e, p: {"history": _append(c["history"], "cancel")}),
            "recordTimeout": assign(lambda c, e, p: {"history": _append(c["history"], "timeout")}),
            "recordApprove": assign(lambda c, e, p: {"history": _append(c["history"], "approve")}),
            "recordLate": assign(lambda c, e, p: {"history": _append(c["history"], "late")}),
            "recordReject": assign(lambda c, e, p: {"history": _append(c["history"], "reject")}),
            "recordLookup": assign(lambda c, e, p: {
                "approved": c["approved"] + 1, "history": _append(c["history"], {"lookup": e.get("output")})}),
        },
        actors={"draft": from_promise(_never), "lookup": from_promise(_never)},
    ).create_machine(config)


# Events, by name, so tests and strategies read like a transcript.
def ask(text: str) -> dict[str, Any]:
    return {"type": "ASK", "text": text}


def drafted(text: str) -> dict[str, Any]:
    return {"type": "xstate.done.actor.draft", "output": {"text": text}}


def draft_failed(message: str = "model down") -> dict[str, Any]:
    return {"type": "xstate.error.actor.draft", "error": {"name": "Error", "message": message}}


def looked_up(value: Any) -> dict[str, Any]:
    return {"type": "xstate.done.actor.lookup", "output": value}


def lookup_failed(message: str = "not found") -> dict[str, Any]:
    return {"type": "xstate.error.actor.lookup", "error": {"name": "Error", "message": message}}


def usage(tokens: int = 15, model: str = "scripted") -> dict[str, Any]:
    return {"type": "@agent.usage", "requestId": "draft#1", "model": model,
            "usage": {"inputTokens": tokens - 5, "outputTokens": 5, "totalTokens": tokens}}


APPROVE = {"type": "APPROVE"}
REJECT = {"type": "REJECT"}
CANCEL = {"type": "CANCEL"}
STOP = {"type": "STOP"}
TIMEOUT = {"type": TIMEOUT_EVENT}


def fixed_clock(start: datetime | None = None) -> Callable[[], datetime]:
    """recordedAt clock for entries: deterministic, one millisecond per entry."""
    moment = [start or datetime(2026, 1, 1, tzinfo=UTC)]

    def now() -> datetime:
        moment[0] += timedelta(milliseconds=1)
        return moment[0]

    return now


def record(machine: Any, events: Iterable[Mapping[str, Any]], input: Any = None, *,
           hashes: bool = True, snapshot: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Fold `events` live (engine `transition`) and journal each, as a host does.

    Usage events are journaled without transitioning. With `hashes=False` entries carry no
    verification (a log recorded without hashing)."""
    clock = fixed_clock()
    counter = iter(range(1, 10**9))

    def next_id() -> str:
        return f"e{next(counter):06d}"

    if snapshot is not None:
        first = init_entry(machine, snapshot=dict(snapshot), now=clock, id="e000000")
        state = machine.restore_snapshot(dict(snapshot))
    else:
        first = init_entry(machine, input=input, now=clock, id="e000000")
        state, _ = initial_transition(machine, input=input)
    if not hashes:
        first.pop("verification", None)
    entries = [first]
    for index, event in enumerate(events, start=1):
        if event["type"] != "@agent.usage":
            state, _ = transition(machine, state, dict(event))
        entry = create_replay_entry(machine, dict(event), index, snapshot_after=state if hashes else None,
                                    now=clock, id=next_id())
        entries.append(entry)
    return entries


def live_states(machine: Any, entries: list[Mapping[str, Any]]) -> list[Any]:
    """The snapshot after every entry, folded live (independently of replay/Timeline)."""
    event0 = entries[0]["event"]
    if event0.get("snapshot") is not None:
        state = machine.restore_snapshot(dict(event0["snapshot"]))
    else:
        state, _ = initial_transition(machine, input=event0.get("input"))
    states = [state]
    for entry in entries[1:]:
        if entry["event"]["type"] != "@agent.usage":
            state, _ = transition(machine, state, dict(entry["event"]))
        states.append(state)
    return states


def conversation(turns: int) -> list[dict[str, Any]]:
    """A well-formed transcript: ask, usage, draft, approve, lookup, with some rejections."""
    events: list[dict[str, Any]] = []
    for turn in range(turns):
        events += [ask(f"question {turn}"), usage(10 + turn), drafted(f"draft {turn}")]
        if turn % 3 == 1:
            events += [REJECT, drafted(f"redraft {turn}")]
        events += [APPROVE, looked_up({"turn": turn})]
    return events


def workspace_machine() -> Any:
    """A harder chart for restore-based time travel: parallel regions, deep and shallow history,
    an `after` timer, an always-chain, and children spawned and stopped by events."""
    from agent_explorer.engine import spawn_child, stop_child

    return setup(
        actions={
            "bump": assign(lambda c, e, p: {"edits": c["edits"] + 1}),
            "spawnWorker": spawn_child("job", id="worker", input=lambda c, e, p: {"n": c["edits"]}),
            "stopWorker": stop_child("worker"),
        },
        guards={"many": lambda c, e, p: c["edits"] >= 3},
        actors={"job": from_promise(_never)},
    ).create_machine({
        "id": "workspace",
        "context": {"edits": 0},
        "type": "parallel",
        "states": {
            "editor": {
                "initial": "closed",
                "states": {
                    "closed": {"on": {"OPEN": "open"}},
                    "open": {
                        "initial": "viewing",
                        "states": {
                            "viewing": {"on": {"EDIT": {"target": "editing", "actions": "bump"}}},
                            "editing": {
                                "initial": "typing",
                                "states": {"typing": {"on": {"PAUSE": "paused"}}, "paused": {"on": {"TYPE": "typing"}}},
                                "always": {"guard": "many", "target": "#workspace.editor.open.review"},
                                "on": {"SAVE": "viewing"},
                            },
                            "review": {"on": {"SAVE": "viewing"}},
                            "hist": {"type": "history", "history": "deep"},
                        },
                        "on": {"CLOSE": "#workspace.editor.closed"},
                    },
                    "shallow": {"type": "history"},
                },
                "on": {"REOPEN": ".open.hist"},
            },
            "network": {
                "initial": "online",
                "states": {
                    "online": {"on": {"DROP": "offline", "WORK": {"actions": "spawnWorker"},
                                      "HALT": {"actions": "stopWorker"}}},
                    "offline": {"after": {5000: "online"}, "on": {"RECONNECT": "online"}},
                },
            },
        },
    })


WORKSPACE_EVENTS = [
    "OPEN", "EDIT", "PAUSE", "TYPE", "SAVE", "CLOSE", "REOPEN", "DROP", "RECONNECT", "WORK", "HALT",
    "xstate.after.5000.workspace.network.offline", "xstate.done.actor.worker", "xstate.error.actor.worker",
]
