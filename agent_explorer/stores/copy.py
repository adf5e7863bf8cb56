"""Moving logs between stores and JSONL files, byte for byte (what `agent-explorer export/import` call).

Entries travel as their stored JSON text, so a log copied from PostgreSQL to a file and into SQLite hashes
exactly as recorded. These helpers only copy: they never rewrite an entry, and never write into a
non-empty thread or over an existing file.
"""

from __future__ import annotations

import asyncio
import io
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from ..errors import AgentError, AgentLogFormatError, NonSerializableAgentEventError
from ..eventlog.files import atomic_file, jsonl_lines
from .base import MAX_BATCH_BYTES, EventLogStore, check_thread_id, prepare_entry

__all__ = ["copy_thread", "export_thread_jsonl", "import_thread_jsonl"]

DEFAULT_BATCH = 1000


async def copy_thread(
    src_store: EventLogStore, src_thread: str, dst_store: EventLogStore, dst_thread: str, *, batch_size: int = DEFAULT_BATCH
) -> int:
    """Copy every entry of `src_thread` (as of the call) onto the empty `dst_thread`; return the count.

    Batches are appended in order, each atomically: if the copy stops half way, `dst_thread` holds a
    valid prefix, and a writer racing on `dst_thread` makes the copy fail with a conflict.
    """
    check_thread_id(src_thread)
    check_thread_id(dst_thread, "dst_thread")
    copied = 0
    async for texts in _raw_batches(src_store, src_thread, await _length_of_existing(src_store, src_thread), batch_size):
        copied = await dst_store.append(thread_id=dst_thread, expected_index=copied, entries=texts)
    return copied


async def _length_of_existing(store: EventLogStore, thread_id: str) -> int:
    length = await store.length(thread_id)
    if length == 0:
        raise AgentError(f"thread {thread_id!r} is empty or does not exist", code="thread-not-found", thread_id=thread_id)
    return length


async def _raw_batches(store: EventLogStore, thread_id: str, length: int, batch_size: int) -> AsyncIterator[list[str]]:
    """The stored texts of `[0, length)` in batches of at most `batch_size`, in order."""
    done = 0
    while done < length:
        texts = await store.read_raw(thread_id, done, min(length, done + batch_size))
        if not texts:
            return
        yield texts
        done += len(texts)


async def export_thread_jsonl(
    store: EventLogStore, thread_id: str, target: str | os.PathLike[str] | IO[str], *, batch_size: int = DEFAULT_BATCH
) -> int:
    """Write a thread as JSONL (one JSON line per entry, `\\n`-terminated); return the entry count.

    Each row is checked as `read_raw` checks it (strict JSON, no index gap), so the count is the lines written
    and the file reads back. A one-line stored text is written byte for byte; text a foreign writer spread
    over several lines is written as its compact one-line form. A path must not exist yet (not even as a
    dangling link); the file appears whole or not at all (`atomic_file`). An open text file is written to
    as is.
    """
    check_thread_id(thread_id)
    length = await _length_of_existing(store, thread_id)
    if isinstance(target, (str, os.PathLike)):
        path = Path(target)
        if path.exists() or path.is_symlink():
            raise AgentError(f"{path} already exists; choose another file name", code="file-exists", path=str(path))
        with atomic_file(path) as out:
            handle = io.TextIOWrapper(out, encoding="utf-8", newline="\n", write_through=True)
            try:
                return await _export(store, thread_id, length, handle, batch_size)
            finally:
                handle.detach()  # the atomic writer owns (syncs, renames, closes) the file
    return await _export(store, thread_id, length, target, batch_size)


async def _export(store: EventLogStore, thread_id: str, length: int, handle: IO[str], batch_size: int) -> int:
    written = 0
    async for texts in _raw_batches(store, thread_id, length, batch_size):
        await asyncio.to_thread(handle.write, "\n".join(_one_line(text) for text in texts) + "\n")
        written += len(texts)
    await asyncio.to_thread(handle.flush)
    return written


def _one_line(text: str) -> str:
    """The stored text on one line: as is, or (a multi-line text) its compact form. JSON strings cannot hold a
    raw line break, so one in valid text is whitespace between tokens and a space stands in where orjson
    cannot re-encode (nesting beyond 254)."""
    if "\n" not in text and "\r" not in text:
        return text
    try:
        return orjson.dumps(orjson.loads(text)).decode("utf-8")
    except orjson.JSONEncodeError:
        return text.replace("\r", " ").replace("\n", " ")


def _lines(source: str | os.PathLike[str] | IO[str] | IO[bytes]) -> Iterator[tuple[int, bytes, bool]]:
    """The log layer's JSONL line reader (`jsonl_lines`) over a path or an open stream."""
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as handle:
            yield from jsonl_lines(handle)
        return
    yield from jsonl_lines(source)


async def import_thread_jsonl(
    store: EventLogStore,
    thread_id: str,
    source: str | os.PathLike[str] | IO[str] | IO[bytes],
    *,
    on_truncated: str = "error",
    batch_size: int = DEFAULT_BATCH,
) -> int:
    """Append a JSONL log (entries 0..n-1, one per line) to the empty `thread_id`; return the count.

    Every line is checked before anything is written; a bad line raises AgentLogFormatError with
    `.line` (1-based). A last line cut short (no newline, not JSON) is `truncated=True`; with
    `on_truncated="drop"` it is left out and the valid prefix is imported.
    """
    check_thread_id(thread_id)
    if on_truncated not in ("error", "drop"):
        raise AgentError(f"on_truncated must be 'error' or 'drop', got {on_truncated!r}", code="invalid-argument")
    texts = await asyncio.to_thread(_read_checked, source, on_truncated)
    if not texts:
        raise AgentLogFormatError(f"{_name(source)} holds no entries", line=None, valid_entries=0)
    written = 0
    while written < len(texts):
        batch: list[str] = []
        size = 0
        for text in texts[written : written + batch_size]:
            size += len(text)
            if batch and size > MAX_BATCH_BYTES // 2:
                break
            batch.append(text)
        written = await store.append(thread_id=thread_id, expected_index=written, entries=batch)
    return written


def _read_checked(source: Any, on_truncated: str) -> list[str]:
    texts: list[str] = []
    ids: dict[str, int] = {}
    for number, raw, truncated in _lines(source):
        if truncated and on_truncated == "drop":
            break
        try:
            text = raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as error:
            raise AgentLogFormatError(
                f"{_name(source)} line {number} is not valid UTF-8: {error}", line=number, valid_entries=len(texts)
            ) from None
        try:
            prepared = prepare_entry(text, len(texts))
        except (AgentLogFormatError, NonSerializableAgentEventError) as error:
            raise AgentLogFormatError(
                f"{_name(source)} line {number}: {error}", line=number, truncated=truncated, valid_entries=len(texts)
            ) from error
        except AgentError as error:
            raise AgentLogFormatError(f"{_name(source)} line {number}: {error}", line=number, valid_entries=len(texts)) from error
        if prepared.id in ids:
            raise AgentLogFormatError(
                f"{_name(source)} line {number}: entry id {prepared.id!r} already appears on line {ids[prepared.id]}",
                line=number, valid_entries=len(texts),
            )
        ids[prepared.id] = number
        texts.append(prepared.text)
    return texts


def _name(source: Any) -> str:
    if isinstance(source, (str, os.PathLike)):
        return str(source)
    return getattr(source, "name", None) or ("stream" if isinstance(source, io.IOBase) else repr(source))
