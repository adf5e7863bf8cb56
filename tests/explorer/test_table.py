"""The windowed event table: pages, filters, positions, growth, and that rows stay small."""

from __future__ import annotations

from typing import Any

import pytest

from agent_explorer.explorer.table import MAX_PAGE, EventTable, page_offset


def entry(i: int, event: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "schemaVersion": 1,
        "id": f"e{i}",
        "index": i,
        "recordedAt": f"2026-01-01T00:00:{i % 60:02d}.000Z",
        "machineId": "m",
        "machineVersion": "1",
        "event": event,
        **extra,
    }


@pytest.fixture
def entries() -> list[dict[str, Any]]:
    out = [entry(0, {"type": "@agent.init", "input": {}})]
    for i in range(1, 1000):
        if i % 10 == 0:
            out.append(
                entry(
                    i,
                    {
                        "type": "@agent.usage",
                        "model": "m1",
                        "usage": {"totalTokens": i},
                    },
                )
            )
        elif i % 3 == 0:
            out.append(
                entry(
                    i, {"type": "NOTE", "text": f"refund #{i}"}, causationId=f"e{i - 1}"
                )
            )
        else:
            out.append(entry(i, {"type": "TICK"}))
    return out


def test_page_is_a_window_not_the_log(entries: list[dict[str, Any]]) -> None:
    table = EventTable(entries)
    page = table.page(offset=200, limit=50)
    assert page["total"] == 1000 and page["offset"] == 200 and len(page["rows"]) == 50
    assert [r["index"] for r in page["rows"]] == list(range(200, 250))
    assert table.page(0, 10_000)["limit"] == MAX_PAGE
    last = table.page(offset=5_000, limit=50)  # past the end: the last page, full, ending at the last row
    assert last["offset"] == 950 and [r["index"] for r in last["rows"]] == list(range(950, 1000))


def test_pages_start_at_page_boundaries_and_the_last_one_is_full() -> None:
    assert [page_offset(o, 100, 100_001) for o in (0, 99, 100, 99_899, 99_900, 99_999, 100_000)] == [
        0, 0, 100, 99_800, 99_900, 99_900, 99_901]
    assert page_offset(99_801, 100, 100_001) == 99_800  # "previous" from the last page lands on a boundary
    assert page_offset(100_001, 100, 100_001) == 99_901  # "next" from the last page stays there
    assert page_offset(7, 100, 12) == 0 and page_offset(0, 100, 0) == 0  # shorter than a page: one page
    long = [entry(i, {"type": "TICK"}) for i in range(100_001)]
    table = EventTable(long)
    end = table.page(100_000, 100)
    assert end["offset"] == 99_901 and len(end["rows"]) == 100 and end["rows"][-1]["index"] == 100_000


def test_anchor_is_the_cursor_row_or_the_next_match(entries: list[dict[str, Any]]) -> None:
    table = EventTable(entries)
    assert table.anchor(500) == 500 and table.anchor(5_000) == 999
    notes = table.matches("NOTE")
    assert notes is not None
    assert table.anchor(501, "NOTE") == notes.index(501)  # the cursor's row is a NOTE: its own row
    assert notes[table.anchor(502, "NOTE")] == 504  # hidden by the filter: the first NOTE after it
    assert notes[table.anchor(999, "NOTE")] == notes[-1]  # none after: the last one
    assert table.anchor(5, "NOTE", "no such text") == 0


def test_rows_carry_what_the_table_shows(entries: list[dict[str, Any]]) -> None:
    table = EventTable(entries)
    table.divergent = frozenset({3})
    rows = {r["index"]: r for r in table.page(0, 20)["rows"]}
    assert rows[3] == {
        "index": 3,
        "id": "e3",
        "type": "NOTE",
        "recordedAt": "2026-01-01T00:00:03.000Z",
        "causationId": "e2",
        "usage": None,
        "summary": '{"text":"refund #3"}',
        "divergent": True,
    }
    assert rows[10]["usage"] == 10 and rows[1]["summary"] == ""


def test_filter_by_type_and_text(entries: list[dict[str, Any]]) -> None:
    table = EventTable(entries)
    usage = table.page(0, 500, type_filter="@agent.usage")
    assert usage["total"] == 99 and all(
        r["type"] == "@agent.usage" for r in usage["rows"]
    )
    hits = table.page(0, 500, text="REFUND #33")
    assert [r["index"] for r in hits["rows"]] == [
        33,
        333,
        336,
        339,
    ]  # case-insensitive substring
    both = table.page(0, 500, type_filter="TICK", text="refund")
    assert both["total"] == 0 and both["rows"] == []
    assert table.types()[0][0] == "TICK"
    assert dict(map(tuple, table.types()))["NOTE"] == sum(
        1 for e in entries if e["event"]["type"] == "NOTE"
    )


def test_position_of_follows_filters(entries: list[dict[str, Any]]) -> None:
    table = EventTable(entries)
    assert table.position_of(500) == 500
    assert table.position_of(20, type_filter="@agent.usage") == 1
    assert table.position_of(21, type_filter="@agent.usage") is None


def test_cached_filter_extends_when_the_log_grows(
    entries: list[dict[str, Any]],
) -> None:
    table = EventTable(entries)
    notes = sum(1 for e in entries if e["event"]["type"] == "NOTE")
    assert table.page(0, 10, type_filter="NOTE")["total"] == notes
    entries.append(entry(1000, {"type": "NOTE", "text": "late"}))
    page = table.page(0, 500, type_filter="NOTE", text="")
    assert page["total"] == notes + 1 and page["rows"][-1]["index"] == 1000
    last = table.page(notes, 10, type_filter="NOTE")["rows"]  # the last page: full, ending at the new entry
    assert len(last) == 10 and last[-1]["index"] == 1000
    assert ["NOTE", notes + 1] in table.types()


def test_payload_summary_is_capped(entries: list[dict[str, Any]]) -> None:
    entries[5] = entry(5, {"type": "BIG", "blob": "x" * 10_000})
    row = EventTable(entries).row(5)
    assert len(row["summary"]) <= 140 and row["summary"].endswith("…")


def test_a_longer_needle_narrows_the_broader_cached_search(
    entries: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    table = EventTable(entries)
    assert table.page(0, 500, text="refund")["total"] == 300
    scanned: list[Any] = []
    real = EventTable._haystack
    monkeypatch.setattr(
        EventTable, "_haystack", staticmethod(lambda e: scanned.append(e) or real(e))
    )
    narrowed = table.page(0, 500, text="refund #33")
    assert [r["index"] for r in narrowed["rows"]] == [33, 333, 336, 339]
    assert len(scanned) == 300, "only the broader query's hits are scanned again"
    notes = table.page(0, 500, type_filter="NOTE", text="refund #3")
    fresh = EventTable(entries).page(0, 500, type_filter="NOTE", text="refund #3")
    assert notes["total"] == fresh["total"] and notes["rows"] == fresh["rows"]
