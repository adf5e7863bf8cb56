"""What the static export's search reads (search_data.py), and values orjson cannot write: the search, the table's
summary and its filter keep working on them. The page-side comparison with search_log is a browser test
(tests/browser/test_table_search_composer_in_lab.py)."""

from __future__ import annotations

import collections
import datetime
import types
from typing import Any

from agent_explorer.explorer.search import SearchQuery, fold_contexts, search_log
from agent_explorer.explorer.search_data import LIST, LIST_X, MAP, MAP_X, SCALAR, encode, search_corpus
from agent_explorer.explorer.table import EventTable


def test_encode_keeps_key_order_and_pythons_text_of_each_value() -> None:
    assert encode({"2": "b", "1": "a", "z": [1, 1.0, 1e-05, True, None]}) == [
        MAP, "2", "b", "1", "a", "z",
        [LIST, [SCALAR, "1"], [SCALAR, "1.0"], [SCALAR, "1e-05", "0.00001"], [SCALAR, "true"], [SCALAR, "null"]],
    ]
    moment = datetime.datetime(2026, 3, 2, 9, 0)
    # str() is what the search reads; orjson's JSON (the prefilter's) rides along where it differs
    assert encode(moment) == [SCALAR, "2026-03-02 09:00:00", '"2026-03-02T09:00:00"']
    assert encode(2**70) == [SCALAR, str(2**70), None]  # orjson cannot write it: the page must not reject on it
    assert encode({1: "x"}) == [MAP, ["1"], "x"]  # a non-str key: a path text, never a path segment's match
    pair = collections.namedtuple("pair", "a b")(1, "y")
    assert encode(pair) == [LIST_X, '"pair(a=1, b=\'y\')"', [SCALAR, "1"], "y"]
    assert encode(types.MappingProxyType({"k": "v"})) == [MAP_X, '"{\'k\': \'v\'}"', "k", "v"]


def test_a_windows_contexts_are_runs_of_one_object(machine: Any, entries: list[dict[str, Any]]) -> None:
    corpus = search_corpus(machine, entries, 2, 6)
    assert corpus["start"] == 2 and len(corpus["events"]) == 5
    assert corpus["events"][0][0] == entries[2]["id"] and corpus["events"][0][2][0] == MAP
    contexts = list(fold_contexts(machine, entries))
    starts = [run[0] for run in corpus["contexts"]]
    assert starts[0] == 2 and starts == sorted(starts)
    for i in range(3, 7):  # a new run exactly where the fold made a new context object
        assert (i in starts) == (contexts[i] is not contexts[i - 1])


def test_values_orjson_cannot_write_are_still_searched_summarised_and_filtered(
    machine: Any, entries: list[dict[str, Any]]
) -> None:
    big = {**entries[3], "event": {**entries[3]["event"], "huge": 2**70, "text": "needle"}}
    log = [*entries[:3], big, *entries[4:]]
    hits = search_log(log, SearchQuery("needle", scope="events"))
    assert [(h.index, h.path) for h in hits] == [(3, "event.text")]
    assert [h.index for h in search_log(log, SearchQuery(str(2**70)[:6], scope="events"))] == [3]
    table = EventTable(log)
    assert str(2**70) in table.row(3)["summary"]
    assert table.matches(None, "needle") == [3]
