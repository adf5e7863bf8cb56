"""The event-log store contract: the abstract `EventLogStore` and the checks every backend shares.

Backends (memory, SQLite, PostgreSQL) subclass `EventLogStore` and only move prepared JSON text in and
out of their storage; argument checks, entry validation and encoding happen here, once, before any
backend sees a value. This module never touches storage itself.

Limits (the same for every store, so a log that fits one fits all):

- thread ids: non-empty `str`, at most `MAX_THREAD_ID_BYTES` UTF-8 bytes, no NUL, no lone surrogates
  (PostgreSQL `text` cannot hold NUL, and btree keys must stay well under a page);
- entry ids: the same rules with `MAX_ENTRY_ID_BYTES`;
- one entry's JSON text: at most `MAX_ENTRY_BYTES` (64 MiB) UTF-8 bytes; one batch: at most
  `MAX_BATCH_BYTES` (256 MiB) and `MAX_BATCH_ENTRIES` entries;
- indices: `int` (never `bool`), 0 <= index < 2**63 (a SQL `bigint`);
- nesting: at most `MAX_NESTING` (254) levels of objects/arrays inside an entry (orjson's limit).
"""

from __future__ import annotations

import abc
import hashlib
import json
import re
from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

import orjson

from ..errors import AgentError, AgentLogFormatError, AgentStoreBusyError, NonSerializableAgentEventError
from ..eventlog.entries import assert_agent_log_entry
from ..eventlog.files import check_entry_rows
from .portal import Portal, SyncStore
from .watching import PollWakeUp, WakeUp, all_thread_lengths, watch_thread

__all__ = [
    "EventLogStore",
    "PreparedEntry",
    "ThreadInfo",
    "ThreadHead",
    "head_digest",
    "MAX_THREAD_ID_BYTES",
    "MAX_ENTRY_ID_BYTES",
    "MAX_ENTRY_BYTES",
    "MAX_BATCH_BYTES",
    "MAX_BATCH_ENTRIES",
    "MAX_INDEX",
    "MAX_NESTING",
    "check_thread_id",
    "check_thread_ids",
    "check_identifier",
    "check_index",
    "check_window",
    "check_read",
    "check_fork",
    "check_fork_range",
    "check_page",
    "prepare_batch",
    "prepare_entry",
    "parse_entry_text",
    "parse_entry_texts",
    "parse_stored_rows",
    "duplicate_id_error",
    "fork_range_error",
]

MAX_THREAD_ID_BYTES = 1024
MAX_ENTRY_ID_BYTES = 1024
MAX_ENTRY_BYTES = 64 * 1024 * 1024
MAX_BATCH_BYTES = 256 * 1024 * 1024
MAX_BATCH_ENTRIES = 1_000_000
MAX_INDEX = 2**63 - 1
MAX_NESTING = 254

T = TypeVar("T")


class ThreadInfo(NamedTuple):
    """One row of `list_threads`: a thread id and its length (the next expected index)."""

    thread_id: str
    length: int


class ThreadHead(NamedTuple):
    """One row of `thread_heads`: what a thread ends with, without reading its entries.

    `length` is the next expected index (the last row's index + 1), `rows` how many rows the thread holds (less
    than `length` only when rows were deleted outside the package), `digest` the SHA-256 of the last row's stored
    JSON text (`head_digest`). The text itself is not read, let alone checked: a caller compares the digest with
    the digest of text it read and checked before (a cache key), and reads the thread when they differ.
    """

    thread_id: str
    length: int
    rows: int
    digest: bytes


def head_digest(text: str | bytes) -> bytes:
    """The SHA-256 of an entry's stored JSON text (its UTF-8 bytes): what `ThreadHead.digest` holds."""
    return hashlib.sha256(text.encode("utf-8") if isinstance(text, str) else text).digest()


class PreparedEntry:
    """A validated entry ready for storage: its position, its id, its exact JSON text and its size."""

    __slots__ = ("index", "id", "text", "size")

    def __init__(self, index: int, id: str, text: str, size: int = 0) -> None:
        self.index, self.id, self.text, self.size = index, id, text, size

    def __repr__(self) -> str:
        return f"PreparedEntry(index={self.index}, id={self.id!r}, {self.size} bytes)"


def _invalid(message: str, **context: Any) -> AgentError:
    return AgentError(message, code="invalid-argument", **context)


def _check_key_text(value: Any, what: str, limit: int) -> str:
    """Ids are bound as SQL parameters; refuse what a backend could not store verbatim."""
    if not isinstance(value, str):
        raise _invalid(f"{what} must be a str, got {type(value).__name__}: {value!r:.80}")
    if not value:
        raise _invalid(f"{what} must not be empty")
    if "\x00" in value:
        raise _invalid(f"{what} {value!r:.80} contains a NUL character, which stores cannot hold")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise _invalid(f"{what} {value!r:.80} contains a lone surrogate (not valid Unicode text)") from None
    if size > limit:
        raise _invalid(f"{what} is {size} UTF-8 bytes long; the limit is {limit} bytes")
    return value


def check_thread_id(thread_id: Any, what: str = "thread_id") -> str:
    """Return `thread_id` if every store can hold it verbatim, else raise AgentError(invalid-argument)."""
    return _check_key_text(thread_id, what, MAX_THREAD_ID_BYTES)


_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,39}$")


def check_identifier(name: Any, what: str) -> str:
    """A schema or table name is spliced into SQL, so only plain identifiers (<= 40 chars) pass."""
    if not isinstance(name, str) or not _IDENTIFIER.match(name):
        raise _invalid(
            f"{what} {name!r} is not a plain SQL identifier: use letters, digits and _ (not first), "
            f"at most 40 characters"
        )
    return name


def check_thread_ids(thread_ids: Iterable[str]) -> list[str]:
    """Thread ids for a bulk call (`thread_heads`): each checked as `check_thread_id`, each once, ordered by id
    (code point order is UTF-8 byte order, the stores' order)."""
    if isinstance(thread_ids, (str, bytes)):
        raise _invalid("thread_ids must be an iterable of thread ids, not one str")
    return sorted({check_thread_id(thread_id) for thread_id in thread_ids})


def check_index(value: Any, what: str, *, minimum: int = 0) -> int:
    """An index is a plain int in [minimum, 2**63): bools, floats and huge ints are caller bugs."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise _invalid(f"{what} must be an int, got {type(value).__name__}: {value!r:.80}")
    if value < minimum or value > MAX_INDEX:
        raise _invalid(f"{what} must be in [{minimum}, 2**63), got {value}")
    return value


def check_window(from_index: Any, to_index: Any, limit: Any) -> tuple[int, int | None]:
    """Normalise a read window to `[from_index, stop)`; `stop` None means 'to the end'."""
    start = check_index(from_index, "from_index")
    stop: int | None = None
    if to_index is not None:
        stop = check_index(to_index, "to_index")
    if limit is not None:
        count = check_index(limit, "limit")
        stop = min(stop, start + count) if stop is not None else start + count
    if stop is not None:
        stop = max(stop, start)
    return start, stop


def check_read(thread_id: Any, from_index: Any, to_index: Any, limit: Any) -> tuple[str, int, int | None]:
    """The arguments of `read`/`read_raw`, checked: (thread_id, start, stop) as in `check_window`."""
    return (check_thread_id(thread_id), *check_window(from_index, to_index, limit))


def check_fork(thread_id: Any, new_thread_id: Any, up_to_index: Any) -> tuple[str, str, int]:
    """The arguments of `fork`, checked (the range against the source's length is `check_fork_range`)."""
    return (
        check_thread_id(thread_id),
        check_thread_id(new_thread_id, "new_thread_id"),
        check_index(up_to_index, "up_to_index"),
    )


def check_fork_range(thread_id: str, up_to_index: int, length: int) -> None:
    """A fork keeps `[0, up_to_index)` with `1 <= up_to_index <= length`; else `fork_range_error`."""
    if not 1 <= up_to_index <= length:
        raise fork_range_error(thread_id, up_to_index, length)


def check_page(limit: Any, offset: Any) -> tuple[int, int]:
    """The arguments of `list_threads`, checked."""
    return check_index(limit, "limit"), check_index(offset, "offset")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key!r}")
            seen.add(key)
    return result


def parse_entry_text(text: str | bytes | bytearray | memoryview, *, position: int = 0, index: int | None = None) -> tuple[str, dict[str, Any]]:
    """Strictly parse one entry's JSON text; return it as `str` (unchanged) and as a dict.

    Strict means: no NaN/Infinity, no duplicate keys (jsonb would silently keep one), one line (so
    JSONL export can write the text verbatim), and a JSON object at the top.
    """
    if isinstance(text, (bytes, bytearray, memoryview)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as error:
            raise AgentLogFormatError(
                f"entry text at batch position {position} is not valid UTF-8: {error}", index=index if index is not None else position
            ) from None
    if "\n" in text or "\r" in text:
        raise AgentLogFormatError(
            f"entry text at batch position {position} spans several lines; store one-line JSON text",
            index=index if index is not None else position,
        )
    try:
        value = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicate_keys)
    except (ValueError, RecursionError) as error:
        raise AgentLogFormatError(
            f"entry text at batch position {position} is not strict JSON: {error}", index=index if index is not None else position
        ) from None
    if not isinstance(value, dict):
        raise AgentLogFormatError(
            f"entry text at batch position {position} is a JSON {type(value).__name__}, not an object",
            index=index if index is not None else position,
        )
    return text, value


def parse_entry_texts(texts: Iterable[str]) -> list[dict[str, Any]]:
    """Parse JSON text this process validated on the way in (the memory store's) into fresh dicts.

    Rows a database hands back may have been written by anything: those go through `parse_stored_rows`."""
    loads = orjson.loads
    return [loads(text) for text in texts]


def parse_stored_rows(
    name: str, start: int, rows: Iterable[tuple[Any, Any]], *, raw: bool
) -> list[Any]:
    """Rows `(idx, body)` read from `start`, checked by the log reader's own rules (`check_entry_rows`: strict
    JSON text, contiguous indices, each entry's index its row's); their texts (`raw`) or their entries.

    `name` ("thread 't' in ...") leads every message; AgentLogFormatError names the index."""
    checked = check_entry_rows(name, start, rows)
    return [text for text, _ in checked] if raw else [entry for _, entry in checked]


def prepare_batch(
    thread_id: Any, expected_index: Any, entries: Any
) -> tuple[str, int, list[PreparedEntry]]:
    """Check every argument and entry of an append, and encode the entries, before any storage call.

    Entries are dicts (encoded here with orjson: compact, keys in the given order, UTF-8, NUL as
    `\\u0000`) or JSON text (`str`/`bytes`, stored exactly as given after a strict parse). Any problem
    raises before a backend is touched, so a rejected append writes nothing.
    """
    thread_id = check_thread_id(thread_id)
    expected_index = check_index(expected_index, "expected_index")
    if isinstance(entries, (str, bytes, Mapping)) or not isinstance(entries, Sequence):
        raise _invalid(f"entries must be a list of entries, got {type(entries).__name__}")
    if len(entries) > MAX_BATCH_ENTRIES:
        raise _invalid(f"a batch holds at most {MAX_BATCH_ENTRIES} entries, got {len(entries)}")
    if expected_index + len(entries) > MAX_INDEX:
        raise _invalid(f"appending {len(entries)} entries at {expected_index} would pass index 2**63 - 1")
    if not entries:
        return thread_id, expected_index, []
    prepared: list[PreparedEntry] = []
    ids: set[str] = set()
    total = 0
    for position, item in enumerate(entries):
        entry = prepare_entry(item, expected_index + position, position=position)
        if entry.id in ids:
            raise duplicate_id_error(thread_id, entry.id, entry.index, within_batch=True)
        ids.add(entry.id)
        total += entry.size
        if total > MAX_BATCH_BYTES:
            raise _invalid(f"the batch passes {MAX_BATCH_BYTES} bytes of JSON at index {entry.index}; split it")
        prepared.append(entry)
    return thread_id, expected_index, prepared


def prepare_entry(item: Any, index: int, *, position: int = 0) -> PreparedEntry:
    """Validate one entry (a dict, or JSON text as str/bytes) meant for `index`, and encode it.

    Dicts are encoded with orjson (compact, keys in the given order, UTF-8, NUL as `\\u0000`); JSON
    text is kept exactly as given after a strict parse. `position` (the place in the batch) names
    the entry in error paths: `entries[3].event.when`.
    """
    if type(item) is dict:  # the common case, without ABC instance checks
        entry: Mapping[str, Any] = item
        text = ""
    elif isinstance(item, (str, bytes, bytearray, memoryview)):
        text, entry = parse_entry_text(item, position=position, index=index)
    elif isinstance(item, Mapping):
        entry = item
        text = ""
    else:
        raise AgentLogFormatError(
            f"entry at batch position {position} is a {type(item).__name__}, not an entry dict or JSON text",
            index=index,
        )
    # The fields of schema version 1 and strict JSON throughout (NaN, lone surrogates, non-JSON
    # types refused with the offending path), in one pass of the log layer's own check.
    assert_agent_log_entry(entry, index=index)
    own = entry.get("index")
    if isinstance(own, bool) or not isinstance(own, int) or own != index:  # a backstop for the validator
        raise AgentLogFormatError(
            f"entry at batch position {position} has index {own!r}, expected {index}: indices must be "
            f"contiguous from expected_index",
            index=index,
        )
    entry_id = entry.get("id")
    if not (type(entry_id) is str and entry_id.isascii() and 0 < len(entry_id) <= MAX_ENTRY_ID_BYTES and "\x00" not in entry_id):
        entry_id = _check_key_text(entry_id, f"entry id at index {index}", MAX_ENTRY_ID_BYTES)
    try:
        # Dicts are encoded here; JSON text is kept as given, but must encode too (same nesting
        # limit either way, so a log that went in as text can later be hashed and re-serialised).
        encoded = orjson.dumps(entry)
    except (TypeError, ValueError) as error:  # a backstop; the validators refuse the rest first
        raise NonSerializableAgentEventError(
            f"entry at index {index} cannot be encoded as JSON ({error}); values nest at most "
            f"{MAX_NESTING} levels deep",
            path=f"entries[{position}]",
        ) from None
    if not text:
        text = encoded.decode("utf-8")
    size = len(text) if text.isascii() else len(text.encode("utf-8"))
    if size > MAX_ENTRY_BYTES:
        raise _invalid(f"entry at index {index} is {size} bytes of JSON; the limit is {MAX_ENTRY_BYTES}")
    return PreparedEntry(index, entry_id, text, size)


def duplicate_id_error(thread_id: str, entry_id: str, index: int, *, within_batch: bool = False) -> AgentError:
    where = "earlier in the same batch" if within_batch else "already in the thread"
    return AgentError(
        f"entry id {entry_id!r} at index {index} of thread {thread_id!r} is {where}; ids are unique per thread",
        code="duplicate-entry-id",
        thread_id=thread_id,
        entry_id=entry_id,
        index=index,
    )


def fork_range_error(thread_id: str, up_to_index: int, length: int) -> AgentError:
    return _invalid(
        f"cannot fork thread {thread_id!r} up to index {up_to_index}: it has {length} entries, and a fork "
        f"keeps [0, up_to_index) with 1 <= up_to_index <= length (the init entry stays in place)",
        thread_id=thread_id,
        up_to_index=up_to_index,
        length=length,
    )


class EventLogStore(abc.ABC):
    """An append-only event log per thread, with optimistic concurrency on the thread's length.

    Nothing is ever updated or deleted. Reads return fresh dicts (or the exact JSON text stored).
    """

    @abc.abstractmethod
    async def append(self, *, thread_id: str, expected_index: int, entries: Sequence[Any]) -> int:
        """Atomically add `entries` at `expected_index`; return the new length.

        All or nothing. A stale writer gets AgentEventLogConflictError(thread_id, expected_index,
        actual_length); an empty batch changes nothing and returns the length (still checked).
        """

    @abc.abstractmethod
    async def read_raw(
        self, thread_id: str, from_index: int = 0, to_index: int | None = None, *, limit: int | None = None
    ) -> list[str]:
        """The exact JSON text of entries `[from_index, to_index)` (at most `limit`), in order."""

    async def read(
        self, thread_id: str, from_index: int = 0, to_index: int | None = None, *, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """Entries `[from_index, to_index)` (at most `limit`) as fresh dicts, in index order."""
        return parse_entry_texts(await self.read_raw(thread_id, from_index, to_index, limit=limit))

    @abc.abstractmethod
    async def length(self, thread_id: str) -> int:
        """The thread's next expected index; 0 for a thread never written."""

    @abc.abstractmethod
    async def fork(self, *, thread_id: str, new_thread_id: str, up_to_index: int) -> int:
        """Copy entries `[0, up_to_index)` verbatim onto the empty `new_thread_id`; return up_to_index.

        The source is untouched; a non-empty target is a conflict; `up_to_index` outside
        `[1, length]` is AgentError(invalid-argument).
        """

    @abc.abstractmethod
    async def list_threads(self, *, limit: int = 100, offset: int = 0) -> list[ThreadInfo]:
        """Threads ordered by id, with their lengths, one page at a time."""

    async def thread_heads(self, thread_ids: Iterable[str] | None = None) -> list[ThreadHead]:
        """Every thread's head (`ThreadHead`: length, rows held, digest of the last entry's text), ordered by id;
        with `thread_ids`, the heads of those that exist (each once, ordered by id).

        What a summary cache needs to tell an unchanged thread from a changed one without one read per thread: the
        SQLite and PostgreSQL stores answer it in one query. This default (for third-party stores) pages
        `list_threads` and reads each thread's last entry; a thread whose last entry cannot be read is left out
        (the caller then reads the whole thread and meets the error there).
        """
        wanted = None if thread_ids is None else check_thread_ids(thread_ids)
        if wanted is None:
            lengths = list((await all_thread_lengths(self)).items())
        else:
            lengths = [(thread_id, await self.length(thread_id)) for thread_id in wanted]
        heads: list[ThreadHead] = []
        for thread_id, length in lengths:
            if not length:
                continue
            try:
                last = await self.read_raw(thread_id, length - 1)
            except AgentError:
                continue
            if last:
                heads.append(ThreadHead(thread_id, length, length, head_digest(last[0])))
        return heads

    def watch(self, thread_id: str, from_index: int = 0) -> AsyncGenerator[list[dict[str, Any]], None]:
        """Follow a thread: an async iterator of batches, what is stored from `from_index` first, then what is appended.

        Every batch comes from one `read` at the watcher's position, so (appends being atomic):
        - Order: entries arrive in index order, from `from_index`, each exactly once, with no gap.
        - Whole appends: a batch is one or more whole committed appends, never part of one.
        - Falling behind merges: all appends committed while the consumer was busy arrive as one batch (no size cap).
        - The first batch is everything already stored from `from_index` (it starts there even inside an append).
        - No empty batch is ever yielded; an empty or unknown thread just waits for its first append.
        - Isolation: only `thread_id`'s own entries; a fork or a sibling thread never shows.
        - Never blocks a writer: no lock or read transaction is held between reads.
        - Wakes on the backend's signal (memory: the append; SQLite: a short poll; PostgreSQL: NOTIFY), not a busy loop.
        - A transient storage failure after the first read is retried (store-specific budget), then raised.
        - Closing releases all it holds: at once on `aclose()` or task cancel; after `break`, at the loop's next turn.
        Arguments are checked here, before the iterator exists (AgentError invalid-argument).
        """
        return watch_thread(self, check_thread_id(thread_id), check_index(from_index, "from_index"))

    def _watch_wakeup(self, thread_id: str) -> WakeUp:
        """The backend's wake-up hook for one watcher; the default polls with a backoff (5 ms to 200 ms)."""
        return PollWakeUp()

    def _store_wakeup(self) -> WakeUp:
        """The backend's wake-up hook for one watcher of the whole store (`watching.watch_threads`): wakes when
        any thread may have grown or appeared; the default polls with the same backoff."""
        return PollWakeUp()

    def _watch_retry_budget(self, error: Exception) -> float | None:
        """Seconds a watcher keeps retrying reads that fail with `error`; None: not transient, raise it."""
        return 30.0 if isinstance(error, AgentStoreBusyError) else None

    async def aclose(self) -> None:
        """Release connections and threads; the store cannot be used afterwards."""
        portal = self.__dict__.pop("_sync_portal", None)
        if portal is not None and not portal.is_current():
            portal.close()  # from the portal's own thread, SyncStore.close finishes the job

    async def __aenter__(self: T) -> T:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    @property
    def sync(self) -> SyncStore:
        """Blocking versions of the methods, for notebooks and scripts that have no event loop at hand.

        Calls run on a private event-loop thread owned by this store, so they work inside Jupyter
        (whose loop is already running), and mix freely with async calls.
        """

        portal = self.__dict__.get("_sync_portal")
        if portal is None:
            portal = self.__dict__.setdefault("_sync_portal", Portal())
        return SyncStore(self, portal)
