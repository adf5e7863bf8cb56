"""Search over events and contexts: substring / regex / JSON path, context hits as index ranges, paging."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from sample_run import XSS, long_events, record

from agent_explorer.engine import initial_transition, transition
from agent_explorer.errors import AgentError
from agent_explorer.explorer import Explorer
from agent_explorer.explorer.search import (
    PAGE,
    SearchHit,
    SearchQuery,
    parse_path,
    search_log,
)


def contexts_by_plain_fold(machine: Any, log: list[dict[str, Any]]) -> list[Any]:
    """The oracle: the context after each entry, by folding with the engine directly (no Timeline)."""
    snapshot, _ = initial_transition(machine)
    out = [snapshot.context]
    for entry in log[1:]:
        if entry["event"]["type"] != "@agent.usage":
            snapshot, _ = transition(machine, snapshot, entry["event"])
        out.append(snapshot.context)
    return out


def test_event_hits_are_indices_with_where_path_and_text(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    ex = Explorer(machine, entries)
    hits = ex.search("onerror")
    assert hits == [
        1,
        1,
    ]  # the NOTE's text at 1, and the context that remembers it from 1 on
    event, context = hits
    assert isinstance(event, SearchHit) and (event.where, event.path, event.text) == (
        "event",
        "event.text",
        XSS,
    )
    assert (context.where, context.path, context.until) == (
        "context",
        "context.notes[0]",
        8,
    )
    assert ex.search_results["marks"] == [1] and ex.search_results["ranges"] == [
        [1, 8]
    ]  # the context hit is a bar
    ex.index = hits[0]  # a hit is an int: it moves the cursor
    assert ex.frame["index"] == 1


def test_regex_path_case_and_type(machine: Any, entries: list[dict[str, Any]]) -> None:
    ex = Explorer(machine, entries)
    assert ex.search(r"req-\d$", regex=True) == [3, 6]
    assert ex.search("120", path="event.usage.*") == [6]
    assert (
        ex.search("120", path="usage.totalTokens", scope="events")[0].path
        == "event.usage.totalTokens"
    )
    assert ex.search("note", case=True) == [] and ex.search("NOTE", case=True) == [1, 7]
    assert ex.search("req-", type="@agent.usage") == [3, 6]
    only_context = ex.search("ada", path="context.owner.name")
    assert [(h.index, h.until, h.where) for h in only_context] == [(0, 8, "context")]
    assert ex.search("ada", scope="events") == []  # keys and contexts are not events
    # The entry's own id and causation id are searched too (no path given).
    by_id = ex.search("e5", scope="events")
    assert by_id == [5, 6] and [h.paths for h in by_id] == [["id"], ["causationId"]]


def test_context_hits_cover_exactly_the_indices_whose_context_matches(
    machine: Any,
) -> None:
    log = record(machine, long_events(1_200))
    contexts = contexts_by_plain_fold(machine, log)
    ex = Explorer(machine, log)
    for needle in ("hello", '"n": 7', "reviewer"):
        hits = ex.search(needle, scope="context")
        covered = {i for h in hits for i in range(h.index, h.until + 1)}
        expected = {
            i
            for i, c in enumerate(contexts)
            if any(needle.lower() in leaf.lower() for leaf in _leaves(c))
        }
        assert covered == expected, needle
        # Ranges never overlap and are sorted.
        assert all(a.until < b.index for a, b in itertools.pairwise(hits))


def _leaves(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value if isinstance(value, str) else json.dumps(value)]


def test_path_parsing_and_errors() -> None:
    assert parse_path("$.context.items[*].name") == ("context", ["items", "*", "name"])
    assert parse_path("output.text") == (None, ["output", "text"])
    assert parse_path("event.a[2]") == ("event", ["a", 2])
    with pytest.raises(AgentError) as bad_path:
        parse_path("a..b[")
    assert bad_path.value.code == "invalid-search-path"
    with pytest.raises(AgentError) as bad_regex:
        search_log([{"event": {"type": "x"}}], SearchQuery("(", regex=True))
    assert (
        bad_regex.value.code == "invalid-search-pattern"
        and "(" in bad_regex.value.message
    )
    with pytest.raises(AgentError) as bad_scope:
        search_log([{"event": {"type": "x"}}], SearchQuery("x", scope="everywhere"))
    assert bad_scope.value.code == "invalid-search-scope"


def test_needles_json_escapes_are_found_without_the_prefilter() -> None:
    log = [{"event": {"type": "T", "text": 'say "hi"\\now'}}]
    assert search_log(log, SearchQuery('"hi"\\n'))[0].text == 'say "hi"\\now'


def test_hits_are_paged_to_the_browser_and_marked_on_the_track(machine: Any) -> None:
    log = record(machine, long_events(400))
    ex = Explorer(machine, log)
    hits = ex.search("hello", scope="events")
    expected = [i for i, e in enumerate(log) if e["event"].get("text") == "hello"]
    assert hits == expected and ex.search_results["total"] == len(expected) == 40
    assert ex.search_results["marks"] == [int(h) for h in hits]
    assert (
        len(ex.search_results["hits"]) == 40 <= PAGE
        and ex.search_results["offset"] == 0
    )
    json.dumps(ex.search_results)
    # The front end's intents: a search typed in the panel, then the next page.
    ex._on_message(
        ex,
        {
            "kind": "search",
            "text": "TICK",
            "regex": False,
            "path": "",
            "scope": "events",
        },
        [],
    )
    total = ex.search_results["total"]
    assert (
        total == len([e for e in log if e["event"]["type"] == "TICK"]) and total > PAGE
    )
    ex._on_message(ex, {"kind": "search-page", "offset": PAGE}, [])
    assert (
        ex.search_results["offset"] == PAGE
        and ex.search_results["hits"][0]["index"] == ex.search_hits[PAGE].index
    )
    ex._on_message(ex, {"kind": "search", "text": "(", "regex": True}, [])
    assert "not a valid regular expression" in ex.search_results["error"]
    ex._on_message(ex, {"kind": "search", "text": ""}, [])
    assert ex.search_results == {}


def test_limit_stops_early(machine: Any) -> None:
    log = record(machine, long_events(400))
    ex = Explorer(machine, log)
    assert len(ex.search("hello", limit=3)) == 3


def test_long_logs_are_searched_off_the_kernel_thread_and_the_newest_query_wins(
    machine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_explorer.explorer.panels import search

    monkeypatch.setattr(search, "BACKGROUND_OVER", 100)
    log = record(machine, long_events(10_000))
    ex = Explorer(machine, log)
    ex._on_message(ex, {"kind": "search", "text": "hello", "scope": "both"}, [])
    first = ex._search.worker
    assert first is not None
    assert (
        ex.search_results.get("pending") or ex.search_results.get("total") is not None
    )
    ex._on_message(ex, {"kind": "search", "text": "TICK", "scope": "events"}, [])
    second = ex._search.worker
    assert second is not None
    first.join(60)
    second.join(60)
    assert first is not second and not second.is_alive()
    expected = [i for i, e in enumerate(log) if e["event"]["type"] == "TICK"]
    assert ex.search_results["query"]["text"] == "TICK" and ex.search_results[
        "total"
    ] == len(expected)
    assert [int(h) for h in ex.search_hits] == expected


def test_hits_read_as_a_table(machine: Any, entries: list[dict[str, Any]]) -> None:
    table = Explorer(machine, entries).search("onerror").to_pandas()
    assert table.to_dict("records") == [
        {"index": 1, "until": 1, "where": "event", "path": "event.text", "text": XSS},
        {
            "index": 1,
            "until": 8,
            "where": "context",
            "path": "context.notes[0]",
            "text": XSS,
        },
    ]
