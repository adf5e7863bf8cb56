"""One run list row: a thread folded once through the machine, and the state a later fold goes on from.

`summarize_thread` folds a thread's entries (all of them, or only the ones appended since a cached `Carry`)
through the log's one fold, with the verifier and the runtime's effect ledger riding along, and returns the
row and the new `Carry`. Pure: reads no store and no cache, never executes an effect, never writes anything.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..canonical.jcs import state_hash
from ..engine.values import value_text
from ..errors import AgentError
from ..eventlog.entries import USAGE_EVENT_TYPE, recorded_state_hash
from ..eventlog.fold import Step, fold
from ..eventlog.usage import TOKEN_KEYS, get_usage_from_events
from ..eventlog.verification import Verifier
from ..explorer.prices import Prices, record_cost
from ..runtime.effects import AgentEffect, EffectLedger
from ..stores.base import head_digest

__all__ = ["COLUMNS", "STATUSES", "Carry", "RunSummary", "entry_digest", "readable_text", "summarize_thread",
           "unreadable_row"]

STATUSES = ("done", "error", "idle", "in-flight", "skipped", "unreadable")
"""docs/api.md §8: done (final state), error (snapshot status "error"), idle (active, nothing requested in flight;
armed timers allowed), in-flight (a request started with no recorded completion), skipped (another machine
id), unreadable (could not be read or folded)."""

COLUMNS = (
    "entries", "first_recorded", "last_recorded", "machine_id", "version", "state", "status", "owed", "verified",
    "divergent_index", "total_tokens", "cost_usd", "error",
)

REQUEST_KINDS = frozenset({"text", "decision", "plan", "task"})
"""Effects that are requests a host runs (a timer is not: the host only fires it)."""


@dataclass(slots=True)
class RunSummary:
    """One row of the run list (the columns of docs/api.md §8; timestamps as the log's ISO text)."""

    thread_id: str
    entries: int
    first_recorded: str | None
    last_recorded: str | None
    machine_id: str | None
    version: str | None
    state: str
    status: str
    owed: int
    verified: bool | None
    divergent_index: int | None
    total_tokens: int
    cost_usd: float
    error: str | None = None
    value: Any = None
    """The last state value itself (not a column): what `state=` filters match against, as snapshot.matches."""

    def to_json(self) -> dict[str, Any]:
        """The row as JSON values: `cost_usd` NaN becomes None (JSON has no NaN)."""
        row = {"thread_id": self.thread_id, **{name: getattr(self, name) for name in COLUMNS}}
        if isinstance(row["cost_usd"], float) and math.isnan(row["cost_usd"]):
            row["cost_usd"] = None
        return row


@dataclass(slots=True)
class Carry:
    """What a fold needs to go on after a thread's last entry without folding it again: the cache's part.

    `persisted` is the persisted snapshot after entry `length - 1`; `timers` the delays the ledger still owes
    (children in flight are in the snapshot itself). The rest are the verifier's counts and the usage sums,
    kept per model so a row is priced when it is read (a cached row serves any price list). `head` is the SHA-256
    (hex) of the last entry as this package writes its text (`orjson.dumps`): equal to a store's
    `ThreadHead.digest` exactly when the stored text is that entry, byte for byte (a row served on it needs no read).
    """

    length: int
    last_id: str | None
    persisted: dict[str, Any]
    timers: list[dict[str, Any]]
    checked: int
    unverified: int
    usage: int
    previous_index: int | None
    divergent_index: int | None
    total_tokens: float
    recorded_cost: float
    tokens_by_model: dict[str, dict[str, float]] = field(default_factory=dict)
    first_recorded: str | None = None
    last_recorded: str | None = None
    machine_id: str | None = None
    version: str | None = None
    last_hash: str | None = None
    head: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Carry:
        """A carry read back from the cache; anything out of shape raises (the caller ignores that entry)."""
        carry = cls(**{name: data[name] for name in cls.__slots__})
        if not isinstance(carry.persisted, dict) or not isinstance(carry.timers, list) or not isinstance(carry.length, int) \
                or carry.length < 1:
            raise ValueError("cached carry out of shape")
        return carry


def readable_text(text: str) -> str:
    """Error text safe on a terminal and in a table cell: control, C1 and bidi characters escaped."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def describe(error: BaseException) -> str:
    if isinstance(error, AgentError):
        return readable_text(f"[{error.code}] {error.message}")
    return readable_text(f"{type(error).__name__}: {error}")


def unreadable_row(thread_id: str, message: str, entries: int = 0, machine_id: str | None = None,
                   version: str | None = None) -> RunSummary:
    return RunSummary(thread_id, entries, None, None, machine_id, version, "", "unreadable", 0, None, None, 0,
                      math.nan, readable_text(message))


def _recorded_at(entry: Mapping[str, Any]) -> str | None:
    value = entry.get("recordedAt")
    return value if isinstance(value, str) else None


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def price(carry: Carry, prices: Prices | None) -> float:
    """The run's cost: recorded costs plus priced tokens; NaN without prices or when a model has no price."""
    return priced(carry.recorded_cost, carry.tokens_by_model, prices)


def priced(recorded_cost: float, tokens_by_model: Mapping[str, Mapping[str, float]], prices: Prices | None) -> float:
    """`price` from the carry's two fields (a cached record's, served without building its carry)."""
    if prices is None or not prices:
        return math.nan
    total = recorded_cost
    for model, numbers in tokens_by_model.items():
        cost = prices.cost(model or None, numbers)
        if cost is None:
            return math.nan
        total += cost
    return total


def _add_usage(carry: Carry, records: list[Mapping[str, Any]]) -> None:
    """Add the usage records a fold met: tokens as `get_usage_from_events` totals them, and per record either
    its own recorded cost or its token counts under its model (priced when the row is read).

    One pass over the records (the general totals walk every nested field: a tenth of a summary's time on threads
    of a dozen entries); a record whose token counts are objects goes through `get_usage_from_events` itself."""
    if not records:
        return
    total: float = 0
    general = False
    for entry in records:
        event = entry["event"]
        usage = event.get("usage") if isinstance(event, Mapping) else None
        if not isinstance(usage, Mapping):
            continue
        numbers = {k: v for k, v in usage.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        if any(isinstance(usage.get(key), Mapping) for key in TOKEN_KEYS):
            general = True
        tokens = numbers.get("totalTokens")
        if tokens is None and ("inputTokens" in numbers or "outputTokens" in numbers):
            tokens = numbers.get("inputTokens", 0) + numbers.get("outputTokens", 0)  # the AI SDK's total
        total += tokens or 0
        recorded = record_cost(numbers, None, None)
        if recorded is not None:
            carry.recorded_cost += recorded
            continue
        model = event.get("model")
        bucket = carry.tokens_by_model.setdefault(model if isinstance(model, str) else "", {})
        for key, value in numbers.items():
            bucket[key] = bucket.get(key, 0) + value
    if general:
        total = get_usage_from_events(records).get("totalTokens", 0) or 0
    carry.total_tokens += total


def _timer_json(effect: AgentEffect) -> dict[str, Any]:
    return {"site": effect.site, "request_id": effect.request_id, "event": effect.event, "delay": effect.delay,
            "send_id": effect.send_id}


def _timer(data: Mapping[str, Any]) -> AgentEffect:
    return AgentEffect(kind="delay", site=data["site"], request_id=data["request_id"], event=data["event"],
                       delay=data["delay"], send_id=data["send_id"])


@dataclass(slots=True)
class Folded:
    """What `summarize_thread` returns: the row, the carry for the cache (None when nothing may be cached)
    and how many entries were folded to get there (0 for a row served whole)."""

    row: RunSummary
    carry: Carry | None
    folded: int


def summarize_thread(
    machine: Any,
    thread_id: str,
    entries: Sequence[Mapping[str, Any]],
    prices: Prices | None,
    base: Carry | None = None,
) -> Folded:
    """Fold `entries` (the whole thread, or with `base` the entries from index `base.length` on) into a row.

    Versions are not checked: a thread recorded under another version of this machine is folded through this
    one (what would today's code derive?) and its hashes say whether it still agrees (`verified`).
    """
    if base is None:
        return _fold_whole(machine, thread_id, entries, prices)
    return _fold_on(machine, thread_id, entries, prices, base)


def _fold_whole(machine: Any, thread_id: str, entries: Sequence[Mapping[str, Any]], prices: Prices | None) -> Folded:
    if not entries:
        return Folded(unreadable_row(thread_id, "the thread is empty or does not exist"), None, 0)
    first = entries[0]
    if not isinstance(first, Mapping):
        return Folded(unreadable_row(thread_id, "entry 0 is not a JSON object", len(entries)), None, 0)
    machine_id, version = _text_or_none(first.get("machineId")), _text_or_none(first.get("machineVersion"))
    if machine_id != machine.id:
        row = RunSummary(thread_id, len(entries), _recorded_at(first), _recorded_at(entries[-1]), machine_id, version,
                         "", "skipped", 0, None, None, 0, math.nan)
        return Folded(row, None, 0)
    carry = Carry(0, None, {}, [], 0, 0, 0, None, None, 0, 0.0, {}, _recorded_at(first), None, machine_id, version)
    steps = fold(machine, entries, check_version=False, errors="record")
    verifier = Verifier(machine, keep_snapshots=0)
    try:
        init = next(steps)
    except Exception as error:  # noqa: BLE001 - a thread that cannot be seeded is a row, the rest go on
        return Folded(unreadable_row(thread_id, describe(error), len(entries), machine_id, version), None, 1)
    verifier.check(init)
    return _finish(machine, thread_id, entries, prices, carry, steps, verifier,
                   lambda: EffectLedger.start_from(machine, init), init, 0)


def _fold_on(machine: Any, thread_id: str, entries: Sequence[Mapping[str, Any]], prices: Prices | None,
             base: Carry) -> Folded:
    snapshot = machine.restore_snapshot(base.persisted)
    carry = Carry(**{name: getattr(base, name) for name in Carry.__slots__})
    carry.tokens_by_model = {model: dict(numbers) for model, numbers in base.tokens_by_model.items()}
    verifier = Verifier.resumed(machine, entries=base.length, checked=base.checked, unverified=base.unverified,
                                usage=base.usage, previous_index=base.previous_index)
    timers = [_timer(t) for t in base.timers]
    steps = fold(machine, entries, start=(base.length - 1, snapshot), check_version=False, errors="record")
    start = Step(base.length - 1, {}, snapshot, None, False)
    return _finish(machine, thread_id, entries, prices, carry, steps, verifier,
                   lambda: EffectLedger.resumed(machine, snapshot, timers), start, base.length)


LEDGER_BUFFER = 4096
"""Steps kept while the ledger waits: a thread that ends done or in error owes nothing (the ledger clears at
a final state), so its ledger is never stepped; past this many steps the ledger starts and runs along."""


def _finish(machine: Any, thread_id: str, entries: Sequence[Mapping[str, Any]], prices: Prices | None, carry: Carry,
            steps: Any, verifier: Verifier, start_ledger: Callable[[], EffectLedger], last: Step,
            offset: int) -> Folded:
    folded = 1 if offset == 0 else 0
    usage: list[Mapping[str, Any]] = []
    waiting: list[Step] = []
    ledger: EffectLedger | None = None
    try:
        for step in steps:
            verifier.check(step)
            if ledger is not None:
                ledger.step(step)
            else:
                waiting.append(step)
                if len(waiting) > LEDGER_BUFFER:
                    ledger = _caught_up(start_ledger(), waiting)
            if step.actions is None and step.error is None and step.event_type == USAGE_EVENT_TYPE:
                usage.append(step.entry)
            last = step
            folded += 1
        snapshot = last.snapshot
        status = snapshot.status
        owed: list[AgentEffect] = []
        if status == "active":
            owed = (ledger if ledger is not None else _caught_up(start_ledger(), waiting)).owed()
    except Exception as error:  # noqa: BLE001 - machine code that raises outside a step is still one row
        return Folded(unreadable_row(thread_id, describe(error), offset + len(entries), carry.machine_id,
                                     carry.version), None, folded)
    _add_usage(carry, usage)
    if status == "active":
        status = "in-flight" if any(effect.kind in REQUEST_KINDS for effect in owed) else "idle"
    elif status != "error":
        status = "done"
    first_divergence = verifier.divergences[0].index if verifier.divergences else None
    if carry.divergent_index is None:
        carry.divergent_index = first_divergence
    verified = False if carry.divergent_index is not None else (True if verifier.checked else None)
    tail = entries[-1] if entries else None
    if isinstance(tail, Mapping):
        carry.last_recorded = _recorded_at(tail)
        carry.last_id = _text_or_none(tail.get("id"))
        carry.last_hash = recorded_state_hash(tail)
        carry.head = entry_digest(tail)
    carry.length = verifier.entries
    carry.checked, carry.unverified, carry.usage = verifier.checked, verifier.unverified, verifier.usage
    carry.previous_index = verifier.previous_index
    # The verifier already serialized the last state when it checked the last hash: not done twice.
    carry.persisted = verifier.report(snapshot).final_persisted_snapshot or machine.get_persisted_snapshot(snapshot)
    carry.timers = [_timer_json(effect) for effect in owed if effect.kind == "delay"]
    total = carry.total_tokens
    row = RunSummary(
        thread_id, carry.length, carry.first_recorded, carry.last_recorded, carry.machine_id, carry.version,
        value_text(getattr(snapshot, "value", None)), status, len(owed), verified, carry.divergent_index,
        int(total) if float(total).is_integer() else total, price(carry, prices),  # type: ignore[arg-type]
        None, getattr(snapshot, "value", None),
    )
    return Folded(row, carry, folded)


def _caught_up(ledger: EffectLedger, steps: list[Step]) -> EffectLedger:
    for step in steps:
        ledger.step(step)
    steps.clear()
    return ledger


def row_from_carry(thread_id: str, carry: Carry, row: Mapping[str, Any], prices: Prices | None) -> RunSummary:
    """A cached row served whole (the thread did not change), priced with this call's prices."""
    return RunSummary(
        thread_id, carry.length, carry.first_recorded, carry.last_recorded, carry.machine_id, carry.version,
        str(row["state"]), str(row["status"]), int(row["owed"]), row["verified"], carry.divergent_index,
        int(row["total_tokens"]), price(carry, prices), None, row.get("value"),
    )


def entry_digest(entry: Mapping[str, Any]) -> str | None:
    """The SHA-256 (hex) of `entry`'s JSON text as the stores write an entry given as a dict; None when it does not
    encode (it then never matches a stored text)."""
    try:
        return head_digest(orjson.dumps(entry)).hex()  # the rule ThreadHead.digest is made by
    except (TypeError, orjson.JSONEncodeError):
        return None


def unchanged(carry: Carry, entry: Mapping[str, Any]) -> bool:
    """Is `entry` (read now at `carry.length - 1`, the thread having that length) the very tail the carry was
    folded to: same id, same recorded hash and the same content (its digest, for a carry that has one: a last row
    rewritten outside the package under the same id and hash is another entry)? Then the cached row stands."""
    return (isinstance(entry, Mapping) and entry.get("id") == carry.last_id
            and recorded_state_hash(entry) == carry.last_hash
            and (carry.head is None or entry_digest(entry) == carry.head))


def tied(carry: Carry, entry: Mapping[str, Any]) -> bool:
    """Does the cached carry stand for `entry` (the thread's entry at `carry.length - 1`, read now)? Its id must
    be the cached one and its recorded hash the hash of the cached snapshot: never trusted on length alone."""
    if not isinstance(entry, Mapping) or entry.get("id") != carry.last_id:
        return False
    recorded = recorded_state_hash(entry)
    return recorded is not None and recorded == state_hash(carry.persisted)
