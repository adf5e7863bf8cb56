"""The event-log store conformance suite: the store contract (docs/semantics/stores.md), written as executable checks.

`await assert_event_log_store_conformance(factory)` runs every check against stores made by `factory`
and raises AssertionError naming the first violation. It is part of the package (not of the tests) so
a third-party store can prove itself against the reference; it must never depend on a test runner.
Each check writes only to thread ids it invents, so stores sharing one database do not collide.

Run it from a shell: `python -m agent_explorer.stores.conformance sqlite:///tmp/check.db`.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson

from ..errors import (
    AgentError,
    AgentEventLogConflictError,
    AgentLogFormatError,
    NonSerializableAgentEventError,
)
from .base import EventLogStore, ThreadHead, head_digest
from .urls import open_store

__all__ = [
    "assert_event_log_store_conformance",
    "ConformanceCase",
    "CONFORMANCE_CASES",
    "run_conformance_case",
    "make_conformance_entry",
]

StoreFactory = Callable[[], "EventLogStore | Awaitable[EventLogStore]"]
Hook = Callable[[str, Callable[[], Awaitable[None]]], Any]

HASH = "0" * 63 + "1"


def make_conformance_entry(
    index: int,
    *,
    id: str | None = None,
    event: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
    tag: str = "",
) -> dict[str, Any]:
    """An entry in the wire format (docs/semantics/entries.md); index 0 is an `@agent.init` with an execution id."""
    entry: dict[str, Any] = {
        "schemaVersion": 1,
        "id": id if id is not None else f"evt-{tag}{index}",
        "index": index,
        "recordedAt": "2026-01-01T00:00:00.000Z",
        "machineId": "conformance",
        "machineVersion": "1",
        "event": event if event is not None else (
            {"type": "@agent.init", "input": {"n": 0}} if index == 0 else {"type": "STEP", "n": index}
        ),
    }
    if index == 0 and metadata is None:
        metadata = {"executionId": f"exec-{tag or 'x'}"}
    if metadata is not None:
        entry["metadata"] = metadata
    entry["verification"] = {"stateHash": HASH}
    return entry


def _entries(start: int, count: int, tag: str = "") -> list[dict[str, Any]]:
    return [make_conformance_entry(i, tag=tag) for i in range(start, start + count)]


def _thread(name: str) -> str:
    return f"conformance-{name}-{uuid.uuid4().hex[:12]}"


class _Violation(AssertionError):
    pass


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise _Violation(message)


async def _expect_error(
    what: str, awaitable: Awaitable[Any], kind: type[BaseException] = AgentError, code: str | None = None
) -> BaseException:
    try:
        result = await awaitable
    except kind as error:
        if code is not None:
            _check(getattr(error, "code", None) == code, f"{what}: expected code {code!r}, got {getattr(error, 'code', None)!r} ({error})")
        return error
    except Exception as error:
        raise _Violation(f"{what}: expected {kind.__name__}, got {type(error).__name__}: {error}") from error
    raise _Violation(f"{what}: expected {kind.__name__}, but the call succeeded and returned {result!r:.200}")


async def _expect_conflict(what: str, awaitable: Awaitable[Any], thread_id: str, expected: int, actual: int) -> None:
    error = await _expect_error(what, awaitable, AgentEventLogConflictError)
    fields = (getattr(error, "thread_id", None), getattr(error, "expected_index", None), getattr(error, "actual_length", None))
    _check(fields == (thread_id, expected, actual), f"{what}: conflict carries (thread_id, expected_index, actual_length) = {fields!r}, expected {(thread_id, expected, actual)!r}")


async def _assert_thread(store: EventLogStore, thread_id: str, expected: list[dict[str, Any]], what: str) -> None:
    length = await store.length(thread_id)
    _check(length == len(expected), f"{what}: length({thread_id!r}) is {length}, expected {len(expected)}")
    got = await store.read(thread_id)
    _check(got == expected, f"{what}: read({thread_id!r}) returned {len(got)} entries that differ from the {len(expected)} expected")


# --- the checks: each reads as one sentence of the contract ---------------------------------------------


async def append_at_zero_creates_a_thread(store: EventLogStore) -> None:
    t = _thread("new")
    # A thread never written has length 0 and reads empty.
    _check(await store.length(t) == 0, "length of an unknown thread must be 0")
    _check(await store.read(t) == [], "read of an unknown thread must be []")
    # Appending at 0 creates it; append returns the new length.
    entries = _entries(0, 3)
    _check(await store.append(thread_id=t, expected_index=0, entries=entries) == 3, "append at 0 of 3 entries must return 3")
    await _assert_thread(store, t, entries, "after the first append")


async def append_continues_at_the_length(store: EventLogStore) -> None:
    t = _thread("continue")
    entries = _entries(0, 2)
    await store.append(thread_id=t, expected_index=0, entries=entries)
    # The next writer appends at the length it read, one entry or many.
    more = _entries(2, 1) + _entries(3, 4)
    _check(await store.append(thread_id=t, expected_index=2, entries=more[:1]) == 3, "append at 2 must return 3")
    _check(await store.append(thread_id=t, expected_index=3, entries=more[1:]) == 7, "append at 3 of 4 must return 7")
    await _assert_thread(store, t, entries + more, "after three appends")


async def stale_expected_index_is_a_conflict(store: EventLogStore) -> None:
    t = _thread("stale")
    entries = _entries(0, 3)
    await store.append(thread_id=t, expected_index=0, entries=entries)
    # A writer that read an older length (too low) loses, and learns the actual length.
    await _expect_conflict("append at 1 onto a 3-entry thread", store.append(thread_id=t, expected_index=1, entries=_entries(1, 1, "x")), t, 1, 3)
    await _expect_conflict("append at 0 onto a 3-entry thread", store.append(thread_id=t, expected_index=0, entries=_entries(0, 1, "x")), t, 0, 3)
    # A writer that expects more than exists (a gap) loses too.
    await _expect_conflict("append at 5 onto a 3-entry thread", store.append(thread_id=t, expected_index=5, entries=_entries(5, 1)), t, 5, 3)
    gap = _thread("gap")
    await _expect_conflict("append at 1 onto an empty thread", store.append(thread_id=gap, expected_index=1, entries=_entries(1, 1)), gap, 1, 0)
    # Nothing was written by any of them.
    await _assert_thread(store, t, entries, "after rejected stale appends")
    _check(await store.length(gap) == 0, "a rejected append must not create the thread")


async def invalid_expected_index_is_refused(store: EventLogStore) -> None:
    t = _thread("badindex")
    await store.append(thread_id=t, expected_index=0, entries=_entries(0, 1))
    # Negative, bool, float and out-of-range indices are caller bugs, refused before storage.
    for bad in (-1, True, 1.0, 2**63, "1", None):
        await _expect_error(f"append with expected_index={bad!r}", store.append(thread_id=t, expected_index=bad, entries=_entries(1, 1)), AgentError, "invalid-argument")  # type: ignore[arg-type]
    await _assert_thread(store, t, _entries(0, 1), "after refused indices")


async def indices_must_be_contiguous(store: EventLogStore) -> None:
    t = _thread("contiguous")
    await store.append(thread_id=t, expected_index=0, entries=_entries(0, 2))
    # Entry indices must run from expected_index without holes or repeats.
    for what, batch in (
        ("a hole", [make_conformance_entry(2), make_conformance_entry(4)]),
        ("a repeat", [make_conformance_entry(2), make_conformance_entry(2, id="other")]),
        ("a wrong start", [make_conformance_entry(3)]),
    ):
        await _expect_error(f"a batch with {what}", store.append(thread_id=t, expected_index=2, entries=batch), AgentLogFormatError)
    await _assert_thread(store, t, _entries(0, 2), "after non-contiguous batches")


async def ids_are_unique_within_a_thread(store: EventLogStore) -> None:
    t = _thread("ids")
    entries = _entries(0, 2)
    await store.append(thread_id=t, expected_index=0, entries=entries)
    # An id already in the thread is refused, even at the end of an otherwise valid batch.
    batch = [make_conformance_entry(2), make_conformance_entry(3, id=entries[1]["id"])]
    await _expect_error("an id already in the thread", store.append(thread_id=t, expected_index=2, entries=batch), AgentError, "duplicate-entry-id")
    # An id repeated inside one batch is refused.
    batch = [make_conformance_entry(2, id="same"), make_conformance_entry(3, id="same")]
    await _expect_error("an id repeated in the batch", store.append(thread_id=t, expected_index=2, entries=batch), AgentError, "duplicate-entry-id")
    await _assert_thread(store, t, entries, "after duplicate ids")
    # The same id in another thread is fine: ids are unique per thread.
    other = _thread("ids-other")
    await store.append(thread_id=other, expected_index=0, entries=entries)
    await _assert_thread(store, other, entries, "the same ids in another thread")


async def empty_append_changes_nothing(store: EventLogStore) -> None:
    t = _thread("empty")
    # An empty batch returns the length and writes nothing, on a new thread or an existing one.
    _check(await store.append(thread_id=t, expected_index=0, entries=[]) == 0, "an empty append to a new thread must return 0")
    _check(await store.length(t) == 0, "an empty append must not create the thread")
    await store.append(thread_id=t, expected_index=0, entries=_entries(0, 2))
    _check(await store.append(thread_id=t, expected_index=2, entries=[]) == 2, "an empty append must return the length")
    # The expectation is still checked.
    await _expect_conflict("an empty append with a stale index", store.append(thread_id=t, expected_index=1, entries=[]), t, 1, 2)
    await _assert_thread(store, t, _entries(0, 2), "after empty appends")


async def rejected_batches_write_nothing(store: EventLogStore) -> None:
    t = _thread("atomic")
    entries = _entries(0, 3)
    await store.append(thread_id=t, expected_index=0, entries=entries)
    # A non-JSON value at the end of a batch sinks the whole batch, with the offending path.
    for what, bad in (("NaN", float("nan")), ("Infinity", float("inf")), ("a set", {1, 2}), ("a lone surrogate", "\ud800")):
        batch = _entries(3, 3)
        batch[-1]["event"]["value"] = bad
        error = await _expect_error(f"a batch ending in {what}", store.append(thread_id=t, expected_index=3, entries=batch), NonSerializableAgentEventError)
        path = str(getattr(error, "path", ""))
        _check("value" in path or "[2]" in path, f"the error for {what} must name where it is, got path {path!r}")
    # A malformed entry (no event type) sinks its batch too.
    batch = _entries(3, 2)
    del batch[1]["event"]["type"]
    await _expect_error("a batch with an event without type", store.append(thread_id=t, expected_index=3, entries=batch), AgentLogFormatError)
    await _assert_thread(store, t, entries, "after rejected batches")
    _check(await store.append(thread_id=t, expected_index=3, entries=_entries(3, 3)) == 6, "appending after rejections continues at the length")


async def concurrent_appenders_have_one_winner(store: EventLogStore) -> None:
    t = _thread("race")
    await store.append(thread_id=t, expected_index=0, entries=_entries(0, 1))
    n = 8
    # N writers with the same expectation race; exactly one wins and N-1 get a conflict with its length.
    batches = [_entries(1, 1 + w % 3, tag=f"w{w}-") for w in range(n)]
    results = await asyncio.gather(
        *(store.append(thread_id=t, expected_index=1, entries=batch) for batch in batches), return_exceptions=True
    )
    winners = [w for w, r in enumerate(results) if not isinstance(r, BaseException)]
    _check(len(winners) == 1, f"{n} racing appenders must yield exactly 1 winner, got {len(winners)}: {results!r:.300}")
    winner = winners[0]
    length = 1 + len(batches[winner])
    _check(results[winner] == length, f"the winner's append must return {length}, got {results[winner]!r}")
    for w, result in enumerate(results):
        if w == winner:
            continue
        _check(isinstance(result, AgentEventLogConflictError), f"loser {w} must get AgentEventLogConflictError, got {result!r}")
        fields = (result.thread_id, result.expected_index, result.actual_length)  # type: ignore[union-attr]
        _check(fields == (t, 1, length), f"loser {w}'s conflict carries {fields!r}, expected {(t, 1, length)!r}")
    await _assert_thread(store, t, _entries(0, 1) + batches[winner], "after the race")


async def threads_are_isolated(store: EventLogStore) -> None:
    # Interleaved writes to sibling threads (one id a prefix of the other) never mix.
    a = _thread("iso")
    b = a + "-b"
    ea, eb = _entries(0, 4, "a"), _entries(0, 4, "b")
    for i in range(4):
        await store.append(thread_id=a, expected_index=i, entries=ea[i : i + 1])
        if i % 2 == 0:
            await store.append(thread_id=b, expected_index=i, entries=eb[i : i + 2])
    await _assert_thread(store, a, ea, "thread a")
    await _assert_thread(store, b, eb, "thread b")


async def read_from_every_offset(store: EventLogStore) -> None:
    t = _thread("offsets")
    entries = _entries(0, 7)
    await store.append(thread_id=t, expected_index=0, entries=entries[:3])
    await store.append(thread_id=t, expected_index=3, entries=entries[3:])
    # read(from_index=k) is the suffix from k, for every k up to and past the end.
    for k in range(0, 10):
        got = await store.read(t, k)
        _check(got == entries[k:], f"read({t!r}, {k}) returned {len(got)} entries, expected the {len(entries[k:])} from index {k}")
    # Windows page through the log: [from, to) and limit.
    _check(await store.read(t, 2, 5) == entries[2:5], "read(t, 2, 5) must return entries 2..4")
    _check(await store.read(t, 1, limit=3) == entries[1:4], "read(t, 1, limit=3) must return entries 1..3")
    _check(await store.read(t, 5, 100) == entries[5:], "a window past the end stops at the end")
    _check(await store.read(t, 4, 2) == [], "an empty window returns []")
    raw = await store.read_raw(t, 2, 4)
    _check([orjson.loads(text) for text in raw] == entries[2:4], "read_raw returns the entries' JSON text")
    # A negative offset is refused.
    await _expect_error("read from -1", store.read(t, -1), AgentError, "invalid-argument")


async def reads_return_fresh_values(store: EventLogStore) -> None:
    t = _thread("fresh")
    entries = _entries(0, 2)
    await store.append(thread_id=t, expected_index=0, entries=entries)
    # Mutating what append took or what read returned never changes the log.
    entries[1]["event"]["n"] = "mutated after append"
    got = await store.read(t)
    got[0]["event"]["type"] = "mutated after read"
    await _assert_thread(store, t, _entries(0, 2), "after mutating inputs and outputs")


async def fork_copies_a_prefix(store: EventLogStore) -> None:
    t, f = _thread("fork-src"), _thread("fork-dst")
    entries = _entries(0, 6, "src")
    await store.append(thread_id=t, expected_index=0, entries=entries)
    # fork copies [0, up_to_index) onto the new thread, init entry and its execution id included.
    await store.fork(thread_id=t, new_thread_id=f, up_to_index=4)
    await _assert_thread(store, f, entries[:4], "the fork")
    forked = await store.read(f)
    _check(forked[0]["event"]["type"] == "@agent.init" and forked[0]["metadata"]["executionId"] == entries[0]["metadata"]["executionId"], "the fork inherits the init entry and its execution id")
    _check(await store.read_raw(f) == await store.read_raw(t, 0, 4), "fork copies the stored text verbatim")
    # The source is untouched, and the two threads diverge independently afterwards.
    await _assert_thread(store, t, entries, "the source after fork")
    diverge = _entries(4, 2, "fork")
    _check(await store.append(thread_id=f, expected_index=4, entries=diverge) == 6, "appending to the fork continues at up_to_index")
    await store.append(thread_id=t, expected_index=6, entries=_entries(6, 1, "src"))
    await _assert_thread(store, f, entries[:4] + diverge, "the fork after diverging")
    await _assert_thread(store, t, entries + _entries(6, 1, "src"), "the source after diverging")
    # A fork of the whole thread is allowed.
    whole = _thread("fork-whole")
    await store.fork(thread_id=t, new_thread_id=whole, up_to_index=7)
    _check(await store.length(whole) == 7, "a fork up to the length copies everything")


async def fork_bounds_are_checked(store: EventLogStore) -> None:
    t = _thread("fork-bounds")
    await store.append(thread_id=t, expected_index=0, entries=_entries(0, 3))
    # up_to_index must keep the init entry and stay within the thread: 1 <= up_to_index <= length.
    for bad in (0, 4, 100):
        target = _thread("fork-bad")
        await _expect_error(f"fork up to {bad} of a 3-entry thread", store.fork(thread_id=t, new_thread_id=target, up_to_index=bad), AgentError, "invalid-argument")
        _check(await store.length(target) == 0, f"a refused fork up to {bad} must write nothing")
    for odd in (-1, True, 2.0):
        await _expect_error(f"fork up to {odd!r}", store.fork(thread_id=t, new_thread_id=_thread("fork-bad"), up_to_index=odd), AgentError, "invalid-argument")  # type: ignore[arg-type]
    # Forking an unknown thread is out of range too.
    await _expect_error("fork of an unknown thread", store.fork(thread_id=_thread("nothing"), new_thread_id=_thread("fork-bad"), up_to_index=1), AgentError, "invalid-argument")
    await _assert_thread(store, t, _entries(0, 3), "the source after refused forks")


async def fork_onto_a_non_empty_thread_is_a_conflict(store: EventLogStore) -> None:
    t, busy = _thread("fork-src2"), _thread("fork-busy")
    await store.append(thread_id=t, expected_index=0, entries=_entries(0, 3))
    busy_entries = _entries(0, 2, "busy")
    await store.append(thread_id=busy, expected_index=0, entries=busy_entries)
    # The new thread must be empty: forking onto existing entries is a conflict at index 0.
    await _expect_conflict("fork onto a 2-entry thread", store.fork(thread_id=t, new_thread_id=busy, up_to_index=2), busy, 0, 2)
    await _assert_thread(store, busy, busy_entries, "the target after a refused fork")
    # Forking a thread onto itself is the same mistake.
    await _expect_conflict("fork onto itself", store.fork(thread_id=t, new_thread_id=t, up_to_index=2), t, 0, 3)


async def json_round_trips_exactly(store: EventLogStore) -> None:
    t = _thread("json")
    # Unicode, astral characters, right-to-left text, NUL, escapes, deep nesting, key order and
    # numbers at the edges come back exactly as written.
    hard = {
        "z": 1, "a": 2, "M": 3,
        "text": "héllo wörld — ✓ \U0001F600\U0001F9D1\u200d\U0001F4BB \u202eevil\u202c שלום مرحبا",
        "nul": "a\x00b", "controls": "\t\n\r\x08\x0c\x1f\"\\/",
        "numbers": [0, -0, 1, -1, 2**53 - 1, -(2**53 - 1), 2**60, 0.1, 1e-7, 1.5e300, -2.5e-300, 3.0],
        "nested": {"a": [{"b": [{"c": [[[{"d": None, "e": True, "f": False}]]]}]}]},
        "empty": [{}, [], ""],
    }
    entries = [make_conformance_entry(0), make_conformance_entry(1, event={"type": "HARD", **hard})]
    await store.append(thread_id=t, expected_index=0, entries=entries)
    got = await store.read(t)
    _check(got == entries, "a read must equal what was appended")
    _check(list(got[1]["event"].keys()) == ["type", *hard.keys()], "key order must be preserved")
    _check(got[1]["event"]["text"] == hard["text"] and got[1]["event"]["nul"] == "a\x00b", "unicode and NUL must round-trip")
    # Text in is text out: an entry appended as JSON text reads back byte for byte.
    raw = (
        '{"schemaVersion":1, "id":"raw-2","index":2,"recordedAt":"2026-01-01T00:00:00.000Z",'
        '"machineVersion":"1","machineId":"conformance","event":{"type":"RAW","s":"\\u00e9\\ud83d\\ude00\\u0000",'
        '"f":1.0E+2,"n":-0.0,"k":{ "b" : 1 , "a" : [ ] }}}'
    )
    await store.append(thread_id=t, expected_index=2, entries=[raw])
    _check((await store.read_raw(t, 2)) == [raw], "JSON text appended must be read back exactly (read_raw)")
    _check((await store.read(t, 2))[0]["event"]["s"] == "é\U0001F600\x00", "escaped text must decode as written")
    raw_bytes = raw.replace("raw-2", "raw-3").replace('"index":2', '"index":3').encode("utf-8")
    await store.append(thread_id=t, expected_index=3, entries=[raw_bytes])
    _check((await store.read_raw(t, 3)) == [raw_bytes.decode("utf-8")], "JSON bytes appended must be read back exactly")


async def large_entries_round_trip(store: EventLogStore) -> None:
    t = _thread("large")
    # A 1 MB entry (mixed ASCII and multi-byte text) is stored whole and read back equal.
    blob = ("x" * 1000 + "é" * 10 + "\U0001F600") * 1000
    entries = [make_conformance_entry(0), make_conformance_entry(1, event={"type": "BIG", "blob": blob})]
    await store.append(thread_id=t, expected_index=0, entries=entries)
    await _assert_thread(store, t, entries, "a 1 MB entry")


async def list_threads_pages_with_lengths(store: EventLogStore) -> None:
    prefix = _thread("list")
    names = [f"{prefix}-{i}" for i in range(5)]
    for i, name in enumerate(names):
        await store.append(thread_id=name, expected_index=0, entries=_entries(0, i + 1))
    # Every thread is listed once, ordered by id, with its length, across pages.
    seen: list[tuple[str, int]] = []
    offset = 0
    while True:
        page = await store.list_threads(limit=3, offset=offset)
        _check(len(page) <= 3, f"list_threads(limit=3) returned {len(page)} rows")
        if not page:
            break
        seen.extend((row[0], row[1]) for row in page)
        offset += len(page)
    ids = [thread_id for thread_id, _ in seen]
    _check(ids == sorted(ids, key=lambda s: s.encode("utf-8")), "list_threads must order threads by id")
    _check(len(set(ids)) == len(ids), "list_threads must list each thread once")
    mine = [(thread_id, length) for thread_id, length in seen if thread_id.startswith(prefix)]
    _check(mine == [(name, i + 1) for i, name in enumerate(names)], f"list_threads must list the new threads with their lengths, got {mine!r}")


async def thread_heads_name_each_thread_s_end(store: EventLogStore) -> None:
    prefix = _thread("heads")
    names = [f"{prefix}-{i}" for i in range(3)] + [f"{prefix}-'; \"x\" \U0001F600"]
    for i, name in enumerate(names):
        await store.append(thread_id=name, expected_index=0, entries=_entries(0, i + 1, tag=name[-1]))

    async def expected(name: str) -> ThreadHead:
        length = await store.length(name)
        return ThreadHead(name, length, length, head_digest((await store.read_raw(name, length - 1))[0]))

    # Asked by id: each thread that exists, once, ordered by id, with its length, its row count and the SHA-256
    # of its last entry's exact stored text; a thread never written is left out.
    wanted = [names[2], f"{prefix}-missing", names[0], names[2], names[1], names[3]]
    heads = await store.thread_heads(wanted)
    _check(heads == [await expected(name) for name in sorted(names)],
           f"thread_heads({wanted!r}) returned {heads!r}")
    _check(all(type(head.digest) is bytes and len(head.digest) == 32 for head in heads), "a head's digest is 32 bytes")
    # Asked for every thread: the same heads among the rest, each thread once, ordered by id.
    every = await store.thread_heads()
    ids = [head.thread_id for head in every]
    _check(ids == sorted(ids, key=lambda s: s.encode("utf-8")) and len(set(ids)) == len(ids),
           "thread_heads() must list each thread once, ordered by id")
    mine = [head for head in every if head.thread_id.startswith(prefix)]
    _check(mine == heads, f"thread_heads() must hold the new threads' heads, got {mine!r}")
    # An append moves the head: a new length, the new last entry's digest.
    await store.append(thread_id=names[0], expected_index=1, entries=_entries(1, 1, tag="z"))
    moved = await store.thread_heads([names[0]])
    _check(moved == [await expected(names[0])] and moved[0].digest != heads[0].digest,
           f"after an append, thread_heads must name the new last entry, got {moved!r}")
    await _expect_error("thread_heads with an empty id", store.thread_heads([names[0], ""]), AgentError, "invalid-argument")


async def hostile_thread_ids_are_data(store: EventLogStore) -> None:
    # Thread ids are bound parameters: quotes, SQL, wildcards and Unicode are stored verbatim.
    tag = uuid.uuid4().hex[:8]
    for name in (f"'; DROP TABLE entries; -- {tag}", f'"quoted" {tag}', f"%_*? {tag}", f"шаг \U0001F600 {tag}", f"{tag} " + "x" * 1000):
        await store.append(thread_id=name, expected_index=0, entries=_entries(0, 1))
        _check(await store.length(name) == 1, f"thread {name!r:.60} must hold its entry")
        _check(await store.read(name) == _entries(0, 1), f"thread {name!r:.60} must read back")
    # Ids no store can hold verbatim are refused with a clear error before anything is written.
    for bad in ("", "a\x00b", "\udc80", 42, None):
        await _expect_error(f"thread id {bad!r}", store.append(thread_id=bad, expected_index=0, entries=_entries(0, 1)), AgentError, "invalid-argument")  # type: ignore[arg-type]


# --- watch: following a thread as it grows -----------------------------------------------------------

WATCH_TIMEOUT = 30.0  # a guard against a hung watcher, not a speed goal (benchmarks/live.py has those)


async def _next_batch(watcher: AsyncIterator[list[dict[str, Any]]], what: str) -> list[dict[str, Any]]:
    try:
        return await asyncio.wait_for(anext(watcher), WATCH_TIMEOUT)
    except TimeoutError:
        raise _Violation(f"{what}: watch yielded nothing within {WATCH_TIMEOUT:g} s") from None
    except StopAsyncIteration:
        raise _Violation(f"{what}: watch ended by itself; it must follow until closed") from None


async def _collect(watcher: AsyncIterator[list[dict[str, Any]]], until: int, what: str) -> list[list[dict[str, Any]]]:
    """Batches until the watcher has yielded entries up to index `until - 1`."""
    batches: list[list[dict[str, Any]]] = []
    while not batches or batches[-1][-1]["index"] < until - 1:
        batches.append(await _next_batch(watcher, what))
    return batches


async def _close(watcher: Any, *pending: asyncio.Future[Any]) -> None:
    """Close a watcher on any path, failing ones included: a task still waiting on it goes first."""
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    await watcher.aclose()


def _check_on_append_boundaries(batches: list[list[dict[str, Any]]], appends: list[list[dict[str, Any]]], start: int, what: str) -> None:
    """The batches, end to end, are the appends end to end, and each batch ends where an append ends."""
    flat = [entry for batch in batches for entry in batch]
    expected = [entry for batch in appends for entry in batch]
    _check([e["index"] for e in flat] == list(range(start, start + len(flat))), f"{what}: watch yielded indices {[e['index'] for e in flat]!r:.200}, expected a contiguous run from {start}")
    _check(flat == expected, f"{what}: watch yielded {len(flat)} entries that differ from the {len(expected)} appended")
    ends, total = set(), start
    for batch in appends:
        total += len(batch)
        ends.add(total)
    for batch in batches:
        _check(not batch or batch[-1]["index"] + 1 in ends, f"{what}: a batch ends at index {batch[-1]['index']}, inside an append (batches are whole appends)")


async def watch_starts_with_what_is_stored(store: EventLogStore) -> None:
    t = _thread("watch-start")
    entries = _entries(0, 5)
    await store.append(thread_id=t, expected_index=0, entries=entries[:2])
    await store.append(thread_id=t, expected_index=2, entries=entries[2:])
    # The first batch is everything already stored from from_index, in one read.
    for start in (0, 2, 4):
        watcher = store.watch(t, from_index=start)
        try:
            first = await _next_batch(watcher, f"watch from {start}")
            _check(first == entries[start:], f"watch({t!r}, from_index={start}) first yielded indices {[e['index'] for e in first]!r}, expected {list(range(start, 5))!r}")
        finally:
            await watcher.aclose()
    # From the end, or past it, it waits for the thread to reach from_index; an unknown thread waits for its first append.
    fresh = _thread("watch-empty")
    later, empty = store.watch(t, from_index=6), store.watch(fresh, from_index=0)
    pending = asyncio.ensure_future(_next_batch(later, "watch from past the end"))
    waiting = asyncio.ensure_future(_next_batch(empty, "watch of a thread not yet written"))
    try:
        await asyncio.sleep(0)
        more = _entries(5, 3)
        await store.append(thread_id=t, expected_index=5, entries=more)
        await store.append(thread_id=fresh, expected_index=0, entries=entries[:2])
        got = await pending
        _check(got == more[1:], f"watch from 6 yielded indices {[e['index'] for e in got]!r}, expected [6, 7]")
        got = await waiting
        _check(got == entries[:2], f"watch of a new thread yielded indices {[e['index'] for e in got]!r}, expected its first append [0, 1]")
    finally:
        await _close(later, pending)
        await _close(empty, waiting)


async def watch_yields_each_append_whole_and_in_order(store: EventLogStore) -> None:
    t = _thread("watch-order")
    await store.append(thread_id=t, expected_index=0, entries=_entries(0, 1))
    watcher = store.watch(t)
    pending: asyncio.Future[Any] = asyncio.ensure_future(_next_batch(watcher, "the stored init entry"))
    try:
        _check(await pending == _entries(0, 1), "watch first yields the stored entry")
        # A consumer that keeps up sees each append as one batch, in order.
        length = 1
        for size in (1, 3, 2, 1, 5):
            batch = _entries(length, size, "live")
            pending = asyncio.ensure_future(_next_batch(watcher, f"the append at {length}"))
            await asyncio.sleep(0)
            length = await store.append(thread_id=t, expected_index=length, entries=batch)
            got = await pending
            _check(got == batch, f"the append of {size} at {length - size} arrived as indices {[e['index'] for e in got]!r}, expected the whole append")
        # A consumer that falls behind gets what was committed meanwhile as one batch of whole appends.
        appends = [_entries(length, 2, "behind"), _entries(length + 2, 1, "behind"), _entries(length + 3, 4, "behind")]
        for batch in appends:
            length = await store.append(thread_id=t, expected_index=batch[0]["index"], entries=batch)
        got = await _next_batch(watcher, "appends made while the consumer was busy")
        _check(got == [entry for batch in appends for entry in batch], f"three appends made while the consumer was busy arrived as indices {[e['index'] for e in got]!r}, expected one batch of all three")
    finally:
        await _close(watcher, pending)


async def watch_batches_are_whole_appends_under_a_concurrent_writer(store: EventLogStore) -> None:
    t = _thread("watch-race")
    await store.append(thread_id=t, expected_index=0, entries=_entries(0, 1))
    appends: list[list[dict[str, Any]]] = []

    async def writer() -> None:
        length = 1
        for b in range(40):
            batch = _entries(length, 1 + (b * 7) % 5, f"b{b}-")
            appends.append(batch)
            length = await store.append(thread_id=t, expected_index=length, entries=batch)
            if b % 3 == 0:
                await asyncio.sleep(0)

    watcher = store.watch(t, from_index=1)
    task = asyncio.ensure_future(writer())
    try:
        first = await _next_batch(watcher, "the concurrent writer's first append")
        await task
        total = 1 + sum(len(batch) for batch in appends)
        batches = [first] if first[-1]["index"] >= total - 1 else [first, *await _collect(watcher, total, "the concurrent writer")]
        _check_on_append_boundaries(batches, appends, 1, "a concurrent writer")
    finally:
        await _close(watcher, task)


async def watch_never_shows_other_threads(store: EventLogStore) -> None:
    t = _thread("watch-iso")
    sibling, fork = t + "-b", t + "-fork"
    await store.append(thread_id=t, expected_index=0, entries=_entries(0, 3))
    watcher, fork_watcher = store.watch(t), None
    try:
        _check(await _next_batch(watcher, "the stored entries") == _entries(0, 3), "watch yields the stored entries")
        # A sibling (its id extends the watched one), a fork and the fork's own appends land first...
        await store.append(thread_id=sibling, expected_index=0, entries=_entries(0, 4, "sib"))
        await store.fork(thread_id=t, new_thread_id=fork, up_to_index=2)
        await store.append(thread_id=fork, expected_index=2, entries=_entries(2, 3, "fork"))
        # ...then the watched thread's own append: the next batch is exactly that append.
        mine = _entries(3, 2, "mine")
        await store.append(thread_id=t, expected_index=3, entries=mine)
        got = await _next_batch(watcher, "the watched thread's append")
        _check(got == mine, f"the watched thread yielded {[(e['id'], e['index']) for e in got]!r:.200} after a sibling, a fork and the fork's appends; expected only its own append")
        # Watching the fork shows the copied prefix, then only the fork's own appends.
        fork_watcher = store.watch(fork)
        _check(await _next_batch(fork_watcher, "the fork") == _entries(0, 2) + _entries(2, 3, "fork"), "watch of a fork yields its prefix and its own appends")
        await store.append(thread_id=t, expected_index=5, entries=_entries(5, 1, "mine"))
        own = _entries(5, 1, "fork")
        await store.append(thread_id=fork, expected_index=5, entries=own)
        got = await _next_batch(fork_watcher, "the fork's append")
        _check(got == own, f"the fork's watcher yielded {[e['id'] for e in got]!r} after an append to its source; expected only its own")
    finally:
        await watcher.aclose()
        if fork_watcher is not None:
            await fork_watcher.aclose()


async def watch_stops_when_closed_or_cancelled(store: EventLogStore) -> None:
    t = _thread("watch-close")
    await store.append(thread_id=t, expected_index=0, entries=_entries(0, 1))
    # aclose() between batches ends it for good.
    watcher = store.watch(t)
    await _next_batch(watcher, "before aclose")
    await watcher.aclose()
    _check(await anext(watcher, None) is None, "a watch must yield nothing after aclose()")
    # Cancelling the task waiting on it ends it too, with the task cancelled.
    watcher = store.watch(t)
    await _next_batch(watcher, "before cancel")
    task = asyncio.ensure_future(anext(watcher))
    await asyncio.sleep(0.01)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    else:
        raise _Violation("a task cancelled while waiting on watch must end cancelled")
    _check(await anext(watcher, None) is None, "a watch must yield nothing after its waiting task was cancelled")
    # Leaving `async for` (break) is the common case; appends and new watchers go on afterwards.
    for round_no in range(3):
        length = await store.length(t)
        async for batch in store.watch(t, from_index=length - 1):
            _check(batch[-1]["index"] == length - 1, f"round {round_no}: watch from {length - 1} yielded {[e['index'] for e in batch]!r}")
            break
        await store.append(thread_id=t, expected_index=length, entries=_entries(length, 1, f"r{round_no}-"))
    await asyncio.sleep(0)  # the loop finalises the abandoned generators
    last = store.watch(t, from_index=3)
    try:
        _check((await _next_batch(last, "after closed watchers"))[0]["index"] == 3, "a new watch works after others closed")
    finally:
        await last.aclose()
    # Bad arguments are refused at the call, before any iterator exists.
    for thread_id, start in (("", 0), (t, -1), (t, True), (t, 1.0)):
        try:
            store.watch(thread_id, from_index=start)  # type: ignore[arg-type]
        except AgentError as error:
            _check(error.code == "invalid-argument", f"watch({thread_id!r}, {start!r}): expected code invalid-argument, got {error.code!r}")
        else:
            raise _Violation(f"watch({thread_id!r}, from_index={start!r}) must raise AgentError(invalid-argument) at the call")


# --- the runner --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConformanceCase:
    group: str
    name: str
    check: Callable[[EventLogStore], Awaitable[None]]

    @property
    def id(self) -> str:
        return f"{self.group}: {self.name}"


def _case(group: str, check: Callable[[EventLogStore], Awaitable[None]]) -> ConformanceCase:
    return ConformanceCase(group, check.__name__.replace("_", " "), check)


CONFORMANCE_CASES: tuple[ConformanceCase, ...] = (
    _case("append", append_at_zero_creates_a_thread),
    _case("append", append_continues_at_the_length),
    _case("append", stale_expected_index_is_a_conflict),
    _case("append", invalid_expected_index_is_refused),
    _case("append", indices_must_be_contiguous),
    _case("append", ids_are_unique_within_a_thread),
    _case("append", empty_append_changes_nothing),
    _case("append", rejected_batches_write_nothing),
    _case("races", concurrent_appenders_have_one_winner),
    _case("isolation", threads_are_isolated),
    _case("isolation", hostile_thread_ids_are_data),
    _case("read", read_from_every_offset),
    _case("read", reads_return_fresh_values),
    _case("read", list_threads_pages_with_lengths),
    _case("fork", fork_copies_a_prefix),
    _case("fork", fork_bounds_are_checked),
    _case("fork", fork_onto_a_non_empty_thread_is_a_conflict),
    _case("json", json_round_trips_exactly),
    _case("json", large_entries_round_trip),
    # After "json": a head's digest is of the text read_raw returns, so a store that rewrites text is named there.
    _case("heads", thread_heads_name_each_thread_s_end),
    _case("watch", watch_starts_with_what_is_stored),
    _case("watch", watch_yields_each_append_whole_and_in_order),
    _case("watch", watch_batches_are_whole_appends_under_a_concurrent_writer),
    _case("watch", watch_never_shows_other_threads),
    _case("watch", watch_stops_when_closed_or_cancelled),
)


async def _make(factory: StoreFactory) -> EventLogStore:
    made = factory()
    store = await made if inspect.isawaitable(made) else made
    return store


async def run_conformance_case(factory: StoreFactory, case: ConformanceCase) -> None:
    """Run one check on a fresh store from `factory`; close the store afterwards."""
    store = await _make(factory)
    try:
        await case.check(store)
    except _Violation as violation:
        raise AssertionError(f"event-log store conformance, {case.id}: {violation}") from violation.__cause__
    finally:
        close = getattr(store, "aclose", None)
        if close is not None:
            await close()


async def _call(hook: Hook | None, name: str, body: Callable[[], Awaitable[None]]) -> None:
    if hook is None:
        await body()
        return
    result = hook(name, body)
    if inspect.isawaitable(result):
        await result


async def assert_event_log_store_conformance(
    factory: StoreFactory, describe: Hook | None = None, it: Hook | None = None
) -> None:
    """Check stores made by `factory` (sync or async, a fresh store per check) against the contract.

    Raises AssertionError on the first violation. `describe(name, body)` and `it(name, body)`, when
    given, are called per group and per check with an async `body` to await (or hand to a runner).
    """
    groups: dict[str, list[ConformanceCase]] = {}
    for case in CONFORMANCE_CASES:
        groups.setdefault(case.group, []).append(case)
    for group, cases in groups.items():

        async def run_group(cases: list[ConformanceCase] = cases) -> None:
            for case in cases:

                async def body(case: ConformanceCase = case) -> None:
                    await run_conformance_case(factory, case)

                await _call(it, case.name, body)

        await _call(describe, group, run_group)


def main(argv: list[str] | None = None) -> int:
    """`python -m agent_explorer.stores.conformance STORE_URL`: run the suite, print one line per check."""

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m agent_explorer.stores.conformance STORE_URL  (memory:, sqlite:///path, postgresql://...)", file=sys.stderr)
        return 2
    url = args[0]

    async def it(name: str, body: Callable[[], Awaitable[None]]) -> None:
        await body()
        print(f"  ok  {name}")

    async def describe(name: str, body: Callable[[], Awaitable[None]]) -> None:
        print(name)
        await body()

    async def run() -> None:
        # memory: would give every check an empty store; that is fine, each check is self-contained.
        await assert_event_log_store_conformance(lambda: open_store(url), describe=describe, it=it)

    try:
        asyncio.run(run())
    except AssertionError as error:
        print(f"FAILED: {error}", file=sys.stderr)
        return 1
    print("all conformance checks passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
