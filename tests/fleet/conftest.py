"""Fleets of recorded threads in real stores: a SQLite file and the PostgreSQL server, the same threads in each.

`FLEET` names every thread and what verifying it against `machines.counter` must find, so each test states
its expectation once and the stores, executors and report views are checked against the same truth.
"""

from __future__ import annotations

import copy
import os
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from filled_stores import schema_holding, sqlite_holding

from agent_explorer import create_replay_entry, init_entry, initial_transition, transition

from . import machines


def record(machine: Any, events: list[dict[str, Any]], tag: str) -> list[dict[str, Any]]:
    """A log as run_agent would journal it: init, then each event with the hash of the state it produced."""
    entries = [init_entry(machine, metadata={"executionId": f"exec-{tag}"})]
    entries[0]["id"] = f"{tag}-0"
    snapshot, _ = initial_transition(machine)
    for index, event in enumerate(events, start=1):
        snapshot, _ = transition(machine, snapshot, event)
        entry = create_replay_entry(machine, event, index, snapshot_after=snapshot)
        entry["id"] = f"{tag}-{index}"
        entries.append(entry)
    return entries


INC, STOP = {"type": "INC"}, {"type": "STOP"}


@dataclass(frozen=True)
class Expected:
    """What verifying a thread against `machines.counter` must report (None: not applicable)."""

    outcome: str
    index: int | None = None
    kind: str | None = None
    event_type: str | None = None
    unverified: int = 0
    unfinished: bool = False


def fleet_threads() -> dict[str, tuple[list[dict[str, Any]] | str, Expected]]:
    """thread id -> (entries, or the raw body of a malformed single row; expected outcome), in id order."""
    counter = machines.counter
    threads: dict[str, tuple[list[dict[str, Any]] | str, Expected]] = {}
    for n in range(12):  # clean runs of different lengths; every third one is still running
        events = [INC] * (n % 5) + ([] if n % 3 == 2 else [STOP])
        threads[f"a-clean-{n:02d}"] = (record(counter, events, f"a{n}"), Expected("ok", unfinished=n % 3 == 2))
    hashed = record(counter, [INC, INC, INC, STOP], "b")
    hashed[3]["verification"]["stateHash"] = "0" * 64
    threads["b-tampered-hash"] = (hashed, Expected("divergent", 3, "state", "INC"))
    payload = record(counter, [INC, INC, INC, INC], "c")
    payload[2]["event"] = {"type": "STOP"}  # the recording counted here; the edited log stops
    threads["c-tampered-payload"] = (payload, Expected("divergent", 2, "state", "STOP"))
    threads["d-other-machine"] = (record(machines.other, [{"type": "GO"}], "d"), Expected("skipped"))
    no_init = record(counter, [INC, INC], "e")[1:]
    for index, entry in enumerate(no_init):
        entry["index"] = index
    threads["e-no-init"] = (no_init, Expected("error"))
    threads["f-malformed"] = ('{"schemaVersion": 1, "id": "f-0", "index": 0, "event": {"type": "@agent.init"', Expected("error"))
    unhashed = record(counter, [INC, STOP], "g")
    del unhashed[1]["verification"]
    threads["g-unhashed"] = (unhashed, Expected("ok", unverified=1))
    threads["h-version-2"] = (record(machines.counter_v2, [INC] * 5 + [STOP], "h"), Expected("error"))
    return threads


# With ignore_version=True the v2 log folds through v1: v1 counts a 4th INC where v2 had stopped counting.
V2_UNDER_V1 = Expected("divergent", 4, "state", "INC")


def expected_for(thread_id: str, *, ignore_version: bool = False) -> Expected:
    if ignore_version and thread_id == "h-version-2":
        return V2_UNDER_V1
    return fleet_threads()[thread_id][1]


async def fill(store: Any, threads: dict[str, tuple[list[dict[str, Any]] | str, Expected]]) -> list[str]:
    """Append every well-formed thread through the store's own API; return the ids of malformed ones."""
    malformed = []
    for thread_id, (entries, _) in threads.items():
        if isinstance(entries, str):
            malformed.append(thread_id)
        else:
            await store.append(thread_id=thread_id, expected_index=0, entries=copy.deepcopy(entries))
    return malformed


@pytest.fixture
def sqlite_fleet(tmp_path: Path) -> Iterator[str]:
    """A SQLite file holding the fleet; the URL. The malformed row is written past the store's checks."""
    yield sqlite_holding(tmp_path / "fleet.db", fleet_threads(), fill)


@pytest.fixture
async def postgres_fleet() -> AsyncIterator[str]:
    """The same fleet in a schema of its own on the PostgreSQL server; the URL (schema dropped afterwards)."""
    async with schema_holding("fleet", fleet_threads(), fill) as url:
        yield url


@pytest.fixture(scope="session")
def junit_schema(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The JUnit XML schema CI servers read (Jenkins xunit-plugin's junit-10.xsd), as pytest ships it.

    pytest validates its own --junitxml output against that file, which its source distribution carries
    (testing/example_scripts/junit-10.xsd). The sdist of the installed pytest is fetched from PyPI with
    pip once and the schema cached outside the repository; nothing is copied into this project.
    """
    import subprocess
    import sys
    import tarfile

    xmlschema = pytest.importorskip("xmlschema")
    version = pytest.__version__
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agent-explorer"
    schema = cache / f"pytest-{version}-junit-10.xsd"
    if not schema.exists():
        where = tmp_path_factory.mktemp("pytest-sdist")
        fetched = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
             f"pytest=={version}", "-d", str(where)],
            capture_output=True, text=True, timeout=600,
        )
        archives = sorted(where.glob("pytest-*.tar.gz"))
        if fetched.returncode != 0 or not archives:
            message = f"cannot fetch pytest {version}'s sdist for junit-10.xsd: {fetched.stderr.strip()[-500:]}"
            if os.environ.get("CI", "").lower() == "true":
                pytest.fail(message)
            pytest.skip(message)
        with tarfile.open(archives[0]) as archive:
            member = archive.extractfile(f"pytest-{version}/testing/example_scripts/junit-10.xsd")
            assert member is not None, "pytest's sdist no longer ships testing/example_scripts/junit-10.xsd"
            data = member.read()
        cache.mkdir(parents=True, exist_ok=True)
        partial = schema.with_name(schema.name + ".partial")
        partial.write_bytes(data)
        partial.replace(schema)
    return xmlschema.XMLSchema(str(schema))
