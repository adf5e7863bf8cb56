"""The run list's rows, filters, sort and pages (explorer/run_list.py), on summary rows shaped as summarize_runs'."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest

from agent_explorer.errors import AgentError
from agent_explorer.explorer.run_list import RunList, make_filter, state_matches, state_paths


def rows(*specs: tuple[str, int, str, str, Any, int]) -> pd.DataFrame:
    """(thread, entries, state, status, verified, minute) -> a summary frame."""
    frame = pd.DataFrame(
        [{"thread_id": tid, "entries": n, "state": state, "status": status, "verified": verified,
          "last_recorded": pd.Timestamp("2026-03-02T09:00:00Z") + pd.Timedelta(minutes=minute),
          "total_tokens": n * 100, "cost_usd": math.nan, "divergent_index": None, "owed": 0, "version": "1",
          "error": None}
         for tid, n, state, status, verified, minute in specs]
    )
    return frame.set_index("thread_id")


SAMPLE = rows(
    ("t-a", 12, "done", "done", True, 5),
    ("t-b", 8, "awaitingApproval", "idle", True, 9),
    ("t-c", 4, "drafting", "in-flight", None, 1),
    ("t-d", 12, "done", "done", False, 7),
    ("t-e", 11, "working.(search.active | notes.idle)", "idle", True, 3),
)


@pytest.mark.parametrize(("text", "paths"), [
    ("deciding", ["deciding"]),
    ("working.search", ["working.search"]),
    ("working.drafting | monitor.idle", ["working.drafting", "monitor.idle"]),
    ("working.(search.active | notes.idle) | log", ["working.search.active", "working.notes.idle", "log"]),
])
def test_a_state_line_reads_back_into_its_active_paths(text: str, paths: list[str]) -> None:
    assert state_paths(text) == paths


def test_a_state_matches_itself_and_its_ancestors_only() -> None:
    assert state_matches("working.search.active", "working")
    assert state_matches("working.search.active", "working.search")
    assert not state_matches("working.searching", "working.search")  # a prefix of a name is not a parent
    assert not state_matches("drafting", "draft")
    assert not state_matches(None, "done")


def test_the_default_order_is_newest_first_and_counts_cover_every_status() -> None:
    runs = RunList()
    runs.update(SAMPLE)
    assert runs.shown == ["t-b", "t-d", "t-a", "t-e", "t-c"]
    assert runs.counts() == {"done": 2, "error": 0, "idle": 2, "in-flight": 1, "skipped": 0, "unreadable": 0}


def test_filters_combine_and_the_sort_stays_in_force() -> None:
    runs = RunList()
    runs.update(SAMPLE)
    runs.set_sort("entries", descending=False)
    runs.set_filter(make_filter(status=["done", "idle"]))
    assert runs.shown == ["t-b", "t-e", "t-a", "t-d"]  # ties keep thread order
    runs.set_filter(make_filter(status="done", verified=False))
    assert runs.shown == ["t-d"]
    runs.set_filter(make_filter(state="working"))
    assert runs.shown == ["t-e"]
    runs.set_filter(make_filter(text="T-C"))
    assert runs.shown == ["t-c"]
    runs.set_filter(make_filter(verified=True))
    assert runs.shown == ["t-b", "t-e", "t-a"]  # None (no hash) is neither True nor False


def test_a_grown_thread_replaces_its_row_and_lands_where_the_sort_puts_it() -> None:
    runs = RunList()
    runs.update(SAMPLE)
    runs.set_sort("entries", descending=True)
    assert runs.shown[-1] == "t-c"
    runs.update(rows(("t-c", 20, "done", "done", True, 30)))
    assert runs.shown[0] == "t-c" and len(runs.rows) == 5
    assert runs.counts()["in-flight"] == 0


def test_a_page_holds_at_most_its_limit_and_says_where_it_is() -> None:
    runs = RunList()
    runs.update(SAMPLE)
    runs.set_sort("thread_id", descending=False)
    page = runs.page(2, 2)
    assert [row["threadId"] for row in page["rows"]] == ["t-c", "t-d"]
    assert (page["offset"], page["total"], page["sort"]) == (2, 5, {"column": "thread_id", "descending": False})
    row = page["rows"][0]
    assert row["status"] == "in-flight" and row["verified"] is None and row["cost"] is None
    assert row["lastRecorded"] == "2026-03-02T09:01:00.000Z"  # as the log writes recordedAt
    assert runs.page(99, 2)["offset"] == 4  # past the end: the last page


def test_bad_criteria_are_refused_by_name() -> None:
    with pytest.raises(AgentError, match="unknown status 'finished'"):
        make_filter(status="finished")
    with pytest.raises(AgentError, match="verified must be"):
        make_filter(verified="yes")  # type: ignore[arg-type]
    with pytest.raises(AgentError, match="cannot sort by 'colour'"):
        RunList().set_sort("colour", True)
