"""Log files: read and write a whole event log as JSONL (one entry per line) or as one JSON array.

The format is detected from content (first non-space byte `{` or `[`), never from the file name.
JSONL is read line by line (orjson per line), so a million-entry file never sits in memory more
than once; a JSON array is parsed whole (one copy of the bytes plus the entries). Writes are atomic
(temp file, fsync, rename). Never modifies an existing log in place; never repairs silently: a bad
line is an error naming it, and only `on_truncated="drop"` skips a crash-truncated final line.
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO, Final, Literal, NoReturn

import orjson

from agent_explorer.errors import (
    AgentError,
    AgentLogFormatError,
    NonSerializableAgentEventError,
)
from agent_explorer.eventlog.entries import (
    INIT_EVENT_TYPE,
    assert_agent_log_entry,
    check_entry_shape,
)
from agent_explorer.eventlog.json_text import JsonTextError, find_duplicate_key, loads_strict

__all__ = [
    "atomic_file",
    "NotUtf8Text",
    "check_entry_rows",
    "iter_log",
    "jsonl_lines",
    "read_log",
    "write_bytes_atomically",
    "write_log",
]

OnTruncated = Literal["error", "drop"]
LogFormat = Literal["jsonl", "json"]

_WHITESPACE: Final = b" \t\r\n"
_BOM: Final = b"\xef\xbb\xbf"
_SQLITE_HEADER: Final = b"SQLite format 3\x00"
_OPTIONS: Final = orjson.OPT_APPEND_NEWLINE
# orjson parses JSON text into exact JSON types, finite floats and surrogate-free strings; the
# one strict-JSON rule it cannot know is the 2**53 integer bound. An int beyond it needs at least
# 16 digits, so a line with no run of 16 digits needs no walk over its values.
# (bytes.translate + a substring test runs at C speed; a regex scan is several times slower.)
_DIGITS_ONLY: Final = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_SIXTEEN_DIGITS: Final = b"0" * 16
# One JSON string token or one structural character: enough to find where array elements start.
_STRUCTURE: Final = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],]', re.DOTALL)


def read_log(path: str | os.PathLike[str], on_truncated: OnTruncated = "error") -> list[dict[str, Any]]:
    """Every entry of the log file at `path`, validated, in order.

    Raises AgentLogFormatError (`.line` 1-based, `.truncated`, `.valid_entries`, `.index`) for a
    malformed line, an invalid entry, an index gap, a duplicate index or id, or a first entry that
    is not `@agent.init`. A final line cut short by a crash (no trailing newline, not complete
    JSON) raises with `truncated=True`, unless `on_truncated="drop"`, which returns the valid
    prefix. An empty file is an empty log; a missing or unreadable one raises OSError.
    """
    # Entries are acyclic trees, so the cyclic GC can free none of them; left on, it rescans the
    # growing list on every generation-2 pass (a fifth to a quarter of the time at 100k entries).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return list(iter_log(path, on_truncated=on_truncated))
    finally:
        if collecting:
            gc.enable()


def iter_log(
    path: str | os.PathLike[str], *, on_truncated: OnTruncated = "error"
) -> Iterator[dict[str, Any]]:
    """Stream the entries of a log file, validating each before it is yielded.

    For JSONL this holds one line at a time (plus the set of entry ids, to refuse duplicates);
    an error surfaces when its line is reached, after the valid entries before it were yielded.
    A bad argument raises at the call; the file is opened (OSError if it cannot be) on the first
    next().
    """
    if on_truncated not in ("error", "drop"):
        raise AgentError(
            f"on_truncated must be 'error' or 'drop', got {on_truncated!r}", code="invalid-argument"
        )
    return _iter_file(Path(path), on_truncated)


def _iter_file(file: Path, on_truncated: OnTruncated) -> Iterator[dict[str, Any]]:
    with file.open("rb") as opened:
        # A pipe (`/dev/stdin`, a shell's `<(...)`) cannot rewind, and sniffing the format rewinds: hold it whole.
        handle: Any = opened if opened.seekable() else io.BytesIO(opened.read())
        first = _first_significant_byte(handle)
        if first is None:
            return
        if handle.read(len(_BOM)) != _BOM:
            handle.seek(0)
        if first == b"{":
            yield from _iter_jsonl(file, handle, on_truncated)
        elif first == b"[":
            yield from _iter_array(file, handle.read(), on_truncated)
        else:
            handle.seek(0)
            hint = ""
            if handle.read(len(_SQLITE_HEADER)) == _SQLITE_HEADER:
                hint = (
                    f" It is a SQLite database: name one of its threads as sqlite:///{file}#THREAD "
                    f"(`agent-explorer threads --store sqlite:///{file}` lists them)."
                )
            raise AgentLogFormatError(
                f"{file}: line 1: a log file is JSONL (one entry object per line) or a JSON array "
                f"of entries, but it starts with {first!r}.{hint}",
                line=1,
                valid_entries=0,
            )


def write_log(
    path: str | os.PathLike[str],
    entries: Iterable[Mapping[str, Any]],
    *,
    format: LogFormat | None = None,
) -> int:
    """Write `entries` to `path` atomically; return how many were written.

    The format is JSONL unless `format="json"` or the name ends in `.json` (then a JSON array with
    one entry per line). Entries are validated exactly as read_log validates them, so every file
    written here reads back; on any error nothing at `path` changes. `entries` may be any
    iterable (a generator streams without holding the log).
    """
    file = Path(path)
    as_array = format == "json" or (format is None and file.suffix.lower() == ".json")
    if format not in (None, "json", "jsonl"):
        raise AgentError(f"format must be 'jsonl' or 'json', got {format!r}", code="invalid-argument")
    with atomic_file(file) as out:
        return _write_entries(file, out, entries, as_array)


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """A file written whole or not at all: a temporary file beside `path`, synced, then renamed over it; on any
    error `path` is as it was. The one way this package writes a file a reader may be reading."""
    file = Path(path)
    directory = file.parent
    fd, temp_name = tempfile.mkstemp(dir=directory, prefix=f".{file.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
            try:
                os.chmod(temp_name, file.stat().st_mode & 0o7777 if file.exists() else 0o644)
            except OSError:  # pragma: no cover - permissions are best effort (e.g. odd filesystems)
                pass
        os.replace(temp_name, file)
    except BaseException:
        try:
            os.unlink(temp_name)
        except FileNotFoundError:
            pass
        raise
    _fsync_directory(directory)


def write_bytes_atomically(path: str | os.PathLike[str], data: bytes) -> None:
    with atomic_file(path) as out:
        out.write(data)


# ------------------------------------------------------------------------------------------------
# Reading


class _LogChecker:
    """Checks each entry against the log so far: shape, contiguous indices from 0, unique ids."""

    __slots__ = ("file", "find_later", "ids", "next_index", "unit")

    def __init__(
        self, file: Path | str, find_later: Callable[[int], str | None] | None = None, *, start: int = 0,
        unit: str = "line",
    ) -> None:
        self.file = file
        self.unit = unit  # "line" (a file's line number) or "index" (a stored row's index)
        self.next_index = start
        self.ids: set[str] = set()
        # On an index gap (error path only): where a later entry holds the missing index, so reordered
        # lines are told apart from missing ones.
        self.find_later = find_later

    def check(self, entry: Any, line: int | None, raw: bytes | None = None) -> None:
        """Validate `entry`; `raw` is the JSON text it was parsed from, when there is one."""
        where = f"{self.file}: {self.unit} {line}" if line is not None else f"{self.file}"
        if type(entry) is not dict:
            self.fail(
                f"{where}: is a JSON {_json_type(entry)}, not an entry object", line, None
            )
        try:
            if raw is not None and _SIXTEEN_DIGITS not in raw.translate(_DIGITS_ONLY):
                check_entry_shape(entry)
            else:
                assert_agent_log_entry(entry)
        except AgentLogFormatError as error:
            self.fail(f"{where}: {error.message}", line, getattr(error, "index", None), error)
        except NonSerializableAgentEventError as error:
            self.fail(f"{where}: {error.message}", line, entry.get("index"), error)
        index: int = entry["index"]
        expected = self.next_index
        if index != expected:
            if index < expected:
                problem = (
                    f"duplicate index {index}: index {index} appeared earlier and the next entry "
                    f"should have index {expected}"
                )
            else:
                later = self.find_later(expected) if self.find_later is not None else None
                if later is not None:
                    problem = (
                        f"out of order: index {index} comes before index {expected}, which is at {later} "
                        f"(entries swapped or moved; a log lists its entries in index order)"
                    )
                else:
                    problem = (
                        f"index gap: expected index {expected}, found {index} (entries "
                        f"{expected}..{index - 1} are missing)"
                    )
            self.fail(f"{where}: {problem}", line, index)
        # A store's contract takes any valid entry at index 0 (the log layer asks for the init entry when it
        # replays), so rows are held to what an append accepts; a file is a whole log and must start with it.
        if index == 0 and self.unit == "line" and entry["event"]["type"] != INIT_EVENT_TYPE:
            self.fail(
                f"{where}: entry 0 has event type {entry['event']['type']!r}; a log starts with "
                f"the {INIT_EVENT_TYPE} entry (replay needs it to seed the fold)",
                line,
                0,
            )
        entry_id: str = entry["id"]
        if entry_id in self.ids:
            self.fail(
                f"{where}: duplicate id {entry_id!r} at index {index}: entry ids are unique "
                "within a log",
                line,
                index,
            )
        self.ids.add(entry_id)
        self.next_index = expected + 1

    def fail(
        self, message: str, line: int | None, index: Any, cause: BaseException | None = None
    ) -> NoReturn:
        if self.unit == "index":  # a stored row: no line, its index is the place
            line, index = None, line
        raise AgentLogFormatError(
            message if message.endswith(".") else message + ".",
            line=line,
            valid_entries=self.next_index,
            index=index if type(index) is int else None,
        ) from cause


def check_entry_rows(name: str, start: int, rows: Iterable[tuple[Any, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The log reader's rules over stored rows `(index, JSON text)` read from `start`: `(text, entry)` each.

    A store's rows may have been written by anything (SQL by hand, another program), so each is checked as a
    log file's line is, plus what only a store can get wrong: the rows' indices run on from `start` with no
    gap, each entry's own `index` is the row's, and the body is text. `name` ("thread 't' in URL") starts
    every message, which then names the index; AgentLogFormatError (`.index`) on the first problem.
    """
    # As in read_log: the entries are acyclic trees, and the cyclic GC rescanning the growing list costs more
    # than the parse on a long thread.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _check_entry_rows(name, start, rows)
    finally:
        if collecting:
            gc.enable()


def _check_entry_rows(name: str, start: int, rows: Iterable[tuple[Any, Any]]) -> list[tuple[str, dict[str, Any]]]:
    checker = _LogChecker(name, start=start, unit="index")
    checked: list[tuple[str, dict[str, Any]]] = []
    for row_index, body in rows:
        expected = checker.next_index
        if row_index != expected:
            if type(row_index) is int and row_index > expected:
                missing = f"row {expected} is" if row_index == expected + 1 else f"rows {expected}..{row_index - 1} are"
                problem = (f"index gap: expected a row at index {expected}, the next is at {row_index} ({missing} "
                           "missing: deleted outside the package?)")
            else:
                problem = f"a row at index {row_index!r} where index {expected} was expected"
            checker.fail(f"{name}: {problem}", expected, expected)
        if type(body) is not str:
            checker.fail(
                f"{name}: index {row_index}: the stored body is {_stored_type(body)}, not JSON text "
                "(written outside the package?)",
                row_index,
                row_index,
            )
        try:
            data = body.encode("utf-8")  # once: the strict reader and the 16-digit test both take bytes
            entry = loads_strict(data)
        except UnicodeEncodeError:
            checker.fail(f"{name}: index {row_index}: the stored text holds a lone surrogate", row_index, row_index)
        except JsonTextError as error:
            checker.fail(f"{name}: index {row_index}: {error.problem}", row_index, row_index)
        if type(entry) is dict and entry.get("index") != row_index:
            checker.fail(
                f"{name}: index {row_index}: the entry stored there says index {_short_json(entry.get('index'))}",
                row_index,
                row_index,
            )
        checker.check(entry, row_index, data)
        checked.append((body, entry))
    return checked


class NotUtf8Text(bytes):
    """A stored TEXT value whose bytes are not UTF-8, handed to `check_entry_rows` raw so that no message
    quotes it (it may hold terminal escapes)."""


def _stored_type(body: Any) -> str:
    if isinstance(body, NotUtf8Text):
        try:
            body.decode("utf-8")
        except UnicodeDecodeError as error:
            return f"text that is not valid UTF-8 (byte {error.start} of {len(body)})"
    if isinstance(body, bytes | bytearray | memoryview):
        return f"a BLOB of {len(body)} bytes"
    if body is None:
        return "NULL"
    return f"a value of type {type(body).__name__}"


def _short_json(value: Any) -> str:
    if value is None or type(value) in (bool, int, float, str):
        text = json.dumps(value, ensure_ascii=True)
        return text if len(text) <= 40 else text[:39] + "…"
    return f"a JSON {_json_type(value)}"


def jsonl_lines(lines: Iterable[bytes | str]) -> Iterator[tuple[int, bytes, bool]]:
    """`(line number, raw line, truncated)` for each non-blank line of a JSONL stream (1-based numbers).

    `truncated` marks what a crash mid-write leaves: the final line, with no newline, and not complete JSON.
    The one reader of JSONL line structure: `read_log` / `iter_log` and the stores' JSONL import both use it,
    so they agree on what is blank, what is truncated and which line is which.
    """
    number = 0
    for raw in lines:
        number += 1
        data = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
        if data[:1] in _WHITESPACE and not data.strip(_WHITESPACE):
            continue  # blank lines carry nothing (only a line that starts blank is copied to find out)
        truncated = False
        if not data.endswith(b"\n"):
            try:
                orjson.loads(data)
            except orjson.JSONDecodeError:
                truncated = True
        yield number, data, truncated


def _iter_jsonl(file: Path, handle: Any, on_truncated: OnTruncated) -> Iterator[dict[str, Any]]:
    loads = orjson.loads
    line = 0

    def find_later(index: int) -> str | None:
        # Error path only: the rest of the file is read to find the line that holds `index`.
        for number, later in enumerate(handle, start=line + 1):
            try:
                value = loads(later)
            except orjson.JSONDecodeError:
                continue
            if type(value) is dict and value.get("index") == index:
                return f"line {number}"
        return None

    checker = _LogChecker(file, find_later)
    check = checker.check
    for line, raw, truncated in jsonl_lines(handle):
        if truncated:
            if on_truncated == "drop":
                return
            try:
                loads(raw)
            except orjson.JSONDecodeError as error:
                raise AgentLogFormatError(
                    f"{file}: line {line}: the final line is truncated (no trailing newline, and "
                    f"not complete JSON: {error.msg}), as a crash mid-write leaves it; the "
                    f"{checker.next_index} entries before it are valid. Recover them with "
                    f"read_log(path, on_truncated='drop').",
                    line=line,
                    truncated=True,
                    valid_entries=checker.next_index,
                ) from None
        try:
            entry = loads_strict(raw)
        except JsonTextError as error:
            raise AgentLogFormatError(
                f"{file}: line {line}: {error.problem}; "
                f"the {checker.next_index} entries before it are valid. Fix or remove the line.",
                line=line,
                valid_entries=checker.next_index,
            ) from None
        check(entry, line, raw)
        yield entry


def _iter_array(file: Path, data: bytes, on_truncated: OnTruncated) -> Iterator[dict[str, Any]]:
    # The whole array is parsed at once: JSON arrays are the small-file, human-edited format;
    # large logs belong in JSONL, which streams.
    try:
        items = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        if error.pos < len(data.rstrip(_WHITESPACE)):
            raise AgentLogFormatError(
                f"{file}: line {error.lineno}: not valid JSON ({error.msg} at column "
                f"{error.colno}); fix the file (JSON arrays are parsed whole, so no entry was read).",
                line=error.lineno,
                valid_entries=0,
            ) from None
        items = _array_prefix(data)
        if on_truncated == "error":
            raise AgentLogFormatError(
                f"{file}: line {error.lineno}: the JSON array is truncated ({error.msg}), as a "
                f"crash mid-write leaves it; the {len(items)} complete entries before the cut "
                "can be recovered with read_log(path, on_truncated='drop').",
                line=error.lineno,
                truncated=True,
                valid_entries=_count_valid(file, items),
            ) from None
    if type(items) is not list:
        raise AgentLogFormatError(
            f"{file}: line 1: the file is a JSON {_json_type(items)}, not an array of entries.",
            line=1,
            valid_entries=0,
        )
    try:
        _check_keys(data, items)
    except JsonTextError as error:
        text = data.decode("utf-8", errors="replace")
        at_line = text.count("\n", 0, error.offset or 0) + 1
        raise AgentLogFormatError(
            f"{file}: line {at_line}: {error.problem}; fix the file (JSON arrays are parsed whole, so no entry was read).",
            line=at_line,
            valid_entries=0,
        ) from None
    position = 0

    def find_later(index: int) -> str | None:
        for later in range(position + 1, len(items)):
            value = items[later]
            if type(value) is dict and value.get("index") == index:
                line_numbers = _array_element_lines(data)
                return f"element {later}" + (f" (line {line_numbers[later]})" if later < len(line_numbers) else "")
        return None

    checker = _LogChecker(file, find_later)
    lines: list[int] | None = None
    for position, entry in enumerate(items):
        try:
            checker.check(entry, None)
        except AgentLogFormatError as error:
            # Only now pay for locating elements: re-raise with the element's line number.
            lines = lines or _array_element_lines(data)
            line = lines[position] if position < len(lines) else None
            message = error.message.replace(f"{file}:", f"{file}: line {line}: element {position}:", 1)
            raise AgentLogFormatError(
                message,
                line=line,
                valid_entries=checker.next_index,
                index=getattr(error, "index", None),
            ) from error.__cause__
        yield entry


def _check_keys(data: bytes, items: list[Any]) -> None:
    """The duplicate-key rule over a whole array (a truncated one's complete prefix too)."""
    if not items:
        return
    found = find_duplicate_key(data.decode("utf-8", errors="replace"))
    if found is not None:
        key, offset = found
        raise JsonTextError(
            f"duplicate key {key!r} in one object (readers disagree on which value counts: refused)", offset
        )


def _count_valid(file: Path, items: list[Any]) -> int:
    checker = _LogChecker(file)
    for entry in items:
        try:
            checker.check(entry, None)
        except AgentLogFormatError:
            break
    return checker.next_index


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def _array_prefix(data: bytes) -> list[Any]:
    """The complete elements at the front of a truncated JSON array (recovery path only)."""
    text = data.decode("utf-8", errors="replace")
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    items: list[Any] = []
    position = text.index("[") + 1
    length = len(text)
    while True:
        while position < length and text[position] in " \t\r\n":
            position += 1
        try:
            value, position = decoder.raw_decode(text, position)
        except (ValueError, RecursionError):  # an element too deep for the stdlib parser ends the prefix
            return items
        items.append(value)
        while position < length and text[position] in " \t\r\n":
            position += 1
        if position >= length or text[position] != ",":
            return items
        position += 1


def _array_element_lines(data: bytes) -> list[int]:
    """1-based line where each element of a JSON array starts (error path only).

    Iterative over string tokens and brackets, so an element nested a thousand levels deep is located
    like any other (a recursive parser would stop with RecursionError)."""
    text = data.decode("utf-8", errors="replace")
    lines: list[int] = []
    depth, line, counted_to, length = 0, 1, 0, len(text)
    for match in _STRUCTURE.finditer(text):
        token = match.group()
        if token[0] == '"':
            continue
        if token in "[{":
            depth += 1
            if depth != 1:
                continue
        elif token in "]}":
            depth -= 1
            continue
        elif depth != 1:
            continue  # a comma inside an element
        position = match.end()
        while position < length and text[position] in " \t\r\n":
            position += 1
        if position >= length or text[position] == "]":
            continue
        line += text.count("\n", counted_to, position)
        counted_to = position
        lines.append(line)
    return lines


def _first_significant_byte(handle: Any) -> bytes | None:
    """The first byte that is not whitespace (after a UTF-8 BOM); rewinds the handle."""
    chunk = handle.read(65536)
    chunk = chunk.removeprefix(_BOM)
    while chunk:
        chunk = chunk.lstrip(_WHITESPACE)
        if chunk:
            handle.seek(0)
            return bytes(chunk[:1])
        chunk = handle.read(65536)
    handle.seek(0)
    return None


def _json_type(value: Any) -> str:
    return {
        dict: "object", list: "array", str: "string", int: "number", float: "number",
        bool: "boolean", type(None): "null",
    }.get(type(value), type(value).__name__)


# ------------------------------------------------------------------------------------------------
# Writing


def _write_entries(file: Path, out: Any, entries: Iterable[Mapping[str, Any]], as_array: bool) -> int:
    checker = _LogChecker(file)
    dumps = orjson.dumps
    if as_array:
        out.write(b"[")
    count = 0
    for entry in entries:
        try:
            checker.check(entry, None)
        except AgentLogFormatError as error:
            raise AgentLogFormatError(
                error.message.replace(f"{file}:", f"{file}: writing entry {count}:", 1),
                valid_entries=count,
                index=getattr(error, "index", None),
            ) from error.__cause__
        try:
            text = dumps(entry, option=_OPTIONS)
        except orjson.JSONEncodeError:  # ints beyond 64 bits: strict JSON, but orjson refuses
            text = (json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        if as_array:
            out.write(b"\n" if count == 0 else b",\n")
            out.write(text[:-1])
        else:
            out.write(text)
        count += 1
    if as_array:
        out.write(b"\n]\n" if count else b"]\n")
    return count


def _fsync_directory(directory: Path) -> None:
    # The rename is durable only once the directory entry is; not every platform allows this.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)
