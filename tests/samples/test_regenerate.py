"""The committed sample_logs/ are exactly what `python -m agent_explorer.samples.regenerate` produces.

JSONL files are compared byte for byte; the SQLite store by thread contents (the exact JSON text of every entry),
not by file bytes. The long run and the store are generated, not committed (`sample_logs` fixture): the long run
must match its committed digest, and start with a short fresh regeneration; `slow` regenerates it whole.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import pytest

from agent_explorer.samples.long_run import entries_for_tickets
from agent_explorer.samples.regenerate import (
    DIGEST_FILE,
    LONG_RUN_TICKETS,
    SAMPLES,
    jsonl_name,
    regenerate,
)
from agent_explorer.stores import SqliteEventLogStore

from .conftest import COMMITTED, SMALL_TICKETS

SHORT = [s.thread_id for s in SAMPLES if s.thread_id != "inbox-long"]
#: When a change to the engine, log, runtime or samples changes what a run records, this is the fix (then review
#: the diff of sample_logs/: it is exactly what changed in recorded runs).
FIX = "sample_logs/ is stale: run `python -m agent_explorer.samples.regenerate` and commit the result"


def _threads(path: Path) -> dict[str, list[str]]:
    async def read() -> dict[str, list[str]]:
        store = SqliteEventLogStore(path)
        try:
            infos = await store.list_threads(limit=1000)
            return {info[0]: await store.read_raw(info[0]) for info in infos}
        finally:
            await store.aclose()

    return asyncio.run(read())


def _lines(path: Path, count: int) -> bytes:
    with path.open("rb") as handle:
        return b"".join(handle.readline() for _ in range(count))


@pytest.mark.parametrize("thread_id", SHORT)
def test_a_committed_jsonl_file_equals_its_regeneration_byte_for_byte(fresh: Path, thread_id: str) -> None:
    name = jsonl_name(thread_id)
    assert (COMMITTED / name).read_bytes() == (fresh / name).read_bytes(), FIX


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_generated_long_run_matches_its_committed_digest(sample_logs: Path) -> None:
    expected, name = (COMMITTED / DIGEST_FILE).read_text(encoding="utf-8").split()
    assert name == jsonl_name("inbox-long")
    assert _digest(sample_logs / name) == expected, FIX


def test_the_long_run_starts_with_exactly_the_regenerated_prefix(fresh: Path, sample_logs: Path) -> None:
    name = jsonl_name("inbox-long")
    prefix = entries_for_tickets(SMALL_TICKETS)
    regenerated = (fresh / name).read_bytes()
    assert regenerated.count(b"\n") == prefix
    assert _lines(sample_logs / name, prefix) == regenerated, FIX
    assert (fresh / DIGEST_FILE).read_text(encoding="utf-8") == f"{_digest(fresh / name)}  {name}\n"


def test_the_long_run_is_at_least_100000_entries(sample_logs: Path) -> None:
    with (sample_logs / jsonl_name("inbox-long")).open("rb") as handle:
        lines = sum(1 for _ in handle)
    assert lines == entries_for_tickets(LONG_RUN_TICKETS) >= 100_000


def test_the_sqlite_store_holds_the_same_threads_as_a_regeneration(fresh: Path, sample_logs: Path) -> None:
    committed, regenerated = _threads(sample_logs / "samples.db"), _threads(fresh / "samples.db")
    assert sorted(committed) == sorted(regenerated) == sorted(s.thread_id for s in SAMPLES)
    for thread_id in SHORT:
        assert committed[thread_id] == regenerated[thread_id], f"{thread_id}: {FIX}"
    long_prefix = regenerated["inbox-long"]
    assert committed["inbox-long"][: len(long_prefix)] == long_prefix, FIX
    assert len(committed["inbox-long"]) == entries_for_tickets(LONG_RUN_TICKETS)


def test_each_jsonl_file_is_its_thread_of_the_store_exported(sample_logs: Path) -> None:
    threads = _threads(sample_logs / "samples.db")
    for thread_id in SHORT:
        text = (COMMITTED / jsonl_name(thread_id)).read_text(encoding="utf-8")
        assert text == "".join(f"{body}\n" for body in threads[thread_id]), thread_id


def test_the_readme_is_regenerated_too(fresh: Path) -> None:
    readme = (COMMITTED / "README.md").read_text(encoding="utf-8")
    assert readme == (fresh / "README.md").read_text(encoding="utf-8"), FIX
    for sample in SAMPLES:
        assert f"`{jsonl_name(sample.thread_id)}`" in readme


def test_regenerating_twice_in_one_directory_gives_the_same_files(tmp_path: Path) -> None:
    # The second run clears and rewrites what it owns (and nothing else) instead of failing on existing files.
    (tmp_path / "keep.txt").write_text("not ours")
    asyncio.run(regenerate(tmp_path, tickets=3, log=lambda _: None))
    first = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.suffix == ".jsonl"}
    asyncio.run(regenerate(tmp_path, tickets=3, log=lambda _: None))
    second = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.suffix == ".jsonl"}
    assert first == second and len(first) == len(SAMPLES)
    assert (tmp_path / "keep.txt").read_text() == "not ours"


@pytest.mark.slow
def test_a_full_regeneration_equals_every_committed_and_generated_file(tmp_path: Path, sample_logs: Path) -> None:
    asyncio.run(regenerate(tmp_path, log=lambda _: None))
    for sample in SAMPLES:
        name = jsonl_name(sample.thread_id)
        assert (sample_logs / name).read_bytes() == (tmp_path / name).read_bytes(), f"{name}: {FIX}"
    assert (COMMITTED / DIGEST_FILE).read_bytes() == (tmp_path / DIGEST_FILE).read_bytes(), FIX
    assert _threads(sample_logs / "samples.db") == _threads(tmp_path / "samples.db"), FIX


