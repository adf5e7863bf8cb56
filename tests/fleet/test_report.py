"""FleetReport's views: JUnit XML valid against the usual schema, JSON, a DataFrame, and text that says what was checked."""

from __future__ import annotations

import asyncio
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from agent_explorer import verify_store
from agent_explorer.stores import create_in_memory_event_log_store
from agent_explorer.stores.urls import redact_url

from . import machines
from .conftest import fleet_threads, record


def test_junit_is_valid_and_has_one_case_per_thread(sqlite_fleet: str, tmp_path: Path, junit_schema: Any) -> None:
    report = verify_store(sqlite_fleet, machines.counter)
    path = report.to_junit(tmp_path / "verify.xml")
    junit_schema.validate(str(path))  # raises with the offending element when invalid
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    assert [case.get("name") for case in cases] == sorted(fleet_threads())
    by_name = {case.get("name"): case for case in cases}
    failure = by_name["b-tampered-hash"].find("failure")
    assert failure is not None and failure.get("type") == "state" and "index 3" in (failure.get("message") or "")
    assert by_name["f-malformed"].find("error") is not None
    assert by_name["d-other-machine"].find("skipped") is not None
    assert by_name["a-clean-00"].find("failure") is None and by_name["a-clean-00"].find("error") is None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == (
        str(len(fleet_threads())), "2", "3", "1")


def test_junit_stays_valid_with_hostile_thread_ids_and_event_types(tmp_path: Path, junit_schema: Any) -> None:
    """Log text is untrusted: markup is escaped, and characters XML cannot carry are shown as escapes."""
    store = create_in_memory_event_log_store()
    hostile = "t\x01<b>&\"'\x1b[31m"
    entries = record(machines.counter, [{"type": "INC"}, {"type": "]]><x\x02/>"}], "h")
    entries[2]["verification"]["stateHash"] = "1" * 64
    asyncio.run(store.append(thread_id=hostile, expected_index=0, entries=entries))
    report = verify_store(store, machines.counter)
    path = report.to_junit(tmp_path / "hostile.xml")
    junit_schema.validate(str(path))
    case = ET.parse(path).getroot().find("testsuite/testcase")
    assert case is not None and case.get("name") == "t\\x01<b>&\"'\\x1b[31m"
    failure = case.find("failure")
    assert failure is not None and "]]><x\\x02/>" in (failure.get("message") or "")


def test_json_and_text_say_what_was_checked(sqlite_fleet: str) -> None:
    report = verify_store(sqlite_fleet, machines.counter)
    data = report.to_json()
    assert json.loads(json.dumps(data)) == data
    assert data["ok"] is False and data["threadsChecked"] == report.threads_checked
    assert data["checked"] + data["unverified"] == data["entriesChecked"] == report.entries_checked
    assert {d["threadId"]: d["index"] for d in data["divergent"]} == {"b-tampered-hash": 3, "c-tampered-payload": 2}
    assert [e["threadId"] for e in data["errors"]] == ["e-no-init", "f-malformed", "h-version-2"]
    assert data["skippedThreads"] == [{"threadId": "d-other-machine", "machineId": "fleet_other"}]
    assert {u["state"] for u in data["unfinished"]} == {"the run is not finished: last state counting"}
    text = str(report)
    first = text.splitlines()[0]
    assert first.startswith("diverges: ") and f"{report.threads_checked} threads" in first
    assert f"{report.hashes_checked} checked against a hash, 1 without a hash (not checked)" in first
    assert "2 divergent" in first and "3 could not be verified" in first and "1 skipped" in first
    assert "4 runs not finished" in first
    assert "thread b-tampered-hash: divergence at index 3: event INC" in text
    assert "thread f-malformed: could not verify: could not read the thread" in text


def test_an_all_clean_fleet_is_ok_and_still_counts_what_it_did_not_check() -> None:
    store = create_in_memory_event_log_store()
    entries = record(machines.counter, [{"type": "INC"}, {"type": "STOP"}], "k")
    del entries[1]["verification"]
    asyncio.run(store.append(thread_id="k", expected_index=0, entries=entries))
    report = verify_store(store, machines.counter)
    assert report.ok and report.summary().startswith("ok: 1 thread of ")
    assert "3 entries: 2 checked against a hash, 1 without a hash (not checked)" in report.summary()
    empty = verify_store(create_in_memory_event_log_store(), machines.counter)
    assert empty.ok and empty.threads_checked == 0 and empty.summary().startswith("nothing verified: 0 threads")


def test_to_pandas_has_one_row_per_thread(sqlite_fleet: str) -> None:
    frame = verify_store(sqlite_fleet, machines.counter).to_pandas()
    assert list(frame["thread_id"]) == sorted(fleet_threads())
    rows = frame.set_index("thread_id")
    assert rows.loc["b-tampered-hash", "index"] == 3 and rows.loc["b-tampered-hash", "kind"] == "state"
    assert rows.loc["d-other-machine", "outcome"] == "skipped"
    assert rows.loc["a-clean-02", "run_state"] == "the run is not finished: last state counting"


def test_passwords_stay_out_of_reports() -> None:
    assert redact_url("postgresql://app:s3cret@db:5432/runs?schema=x") == "postgresql://app:***@db:5432/runs?schema=x"
    assert redact_url("sqlite:////tmp/a.db") == "sqlite:////tmp/a.db"
