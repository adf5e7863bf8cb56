"""Collapsing compound and parallel states: a chart too large to read whole reads in parts (issue 26).

The DOT of a collapsed state is one box that everything inside it maps to; transitions crossing its border end
at the box, those inside it are not drawn. `Explorer.collapse` / `expand` redraw, and the browser's message
(a click on a state's title) is untrusted: anything but a collapsible state's id changes nothing.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_graph import render_with_viz
from watch_chart import watch_machine, watch_run

from agent_explorer.explorer import Explorer
from agent_explorer.explorer.graph import build_graph, collapsible_states, iter_nodes, iter_transition_ids
from agent_explorer.explorer.panels.chart import UnknownStateError

DISPLAYS = "watch.main.displays"


@pytest.fixture(scope="module")
def watch() -> Any:
    return watch_machine()


def inside(definition: dict[str, Any], state_id: str) -> list[str]:
    node = next(n for n in iter_nodes(definition) if n["id"] == state_id)
    return [str(n["id"]) for n in iter_nodes(node) if n["id"] != state_id]


def test_a_collapsed_state_is_one_box_that_everything_inside_maps_to(watch: Any) -> None:
    whole = build_graph(watch.definition)
    graph = build_graph(watch.definition, collapsed=[DISPLAYS])
    within = inside(watch.definition, DISPLAYS)
    assert len(within) > 30
    box = graph.nodes[DISPLAYS]
    assert all(graph.nodes[s] == box for s in within)
    assert {s: graph.collapsed[s][0] for s in within} == dict.fromkeys(within, DISPLAYS)
    assert graph.collapsed["watch.main.displays.update.sec"] == [DISPLAYS, "update.sec"]
    assert DISPLAYS not in graph.collapsed  # the box is the state itself, not something inside it
    # the box is a node (no cluster), labelled with the state's key and the widest path inside
    box_line = next(line for line in graph.dot.splitlines() if f'id="{box}"' in line)
    assert "class=\"state collapsed compound\"" in box_line and "peripheries=2" in box_line
    assert 'label="displays\\n▸ alarm1.setting.a1_field0"' in box_line
    assert f"cluster_{whole.nodes[DISPLAYS]}" not in graph.dot
    # transitions that start and end inside are not drawn (still labelled); crossing ones end at the box
    for tid, source, transition in iter_transition_ids(watch.definition):
        targets = [str(t).removeprefix("#") for t in transition.get("target") or []]
        stays = source in within and all(t in within or t == DISPLAYS for t in targets)
        assert tid in graph.labels
        assert (graph.edges.get(tid) or []) == [] if stays else len(graph.edges.get(tid) or []) >= 1, tid
    assert graph.edges["#watch.main.alarms_beep:on:A:0"]  # alarms_beep -> displays.hist: drawn into the box
    assert graph.collapsible == collapsible_states(watch.definition)
    assert DISPLAYS in graph.collapsible and "watch" not in graph.collapsible


def test_the_collapsed_chart_lays_out_with_graphviz_and_is_smaller(watch: Any, tmp_path: Any) -> None:
    whole = render_with_viz(build_graph(watch.definition).dot, tmp_path)
    parts = render_with_viz(build_graph(watch.definition, collapsed=[DISPLAYS]).dot, tmp_path)
    assert parts["status"] == "success", parts.get("errors")

    def area(result: dict[str, Any]) -> float:
        w, h = result["output"].split('viewBox="')[1].split('"')[0].split()[2:]
        return float(w) * float(h)

    assert area(parts) < area(whole) / 2


def test_explorer_collapse_and_expand_by_id_or_path(watch: Any) -> None:
    ex = Explorer(watch, watch_run(watch, 10))
    token = ex.graph["nodes"]["watch"]
    ex.collapse("main.displays", "#watch.statuses")
    assert ex.collapsed == ["watch.main.displays", "watch.statuses"]  # document order
    assert {v[0] for v in ex.graph["collapsed"].values()} == {"watch.main.displays", "watch.statuses"}
    assert ex.graph["nodes"]["watch"] == token  # the same SVG id prefix: one explorer, one token
    ex.expand("watch.statuses")
    assert ex.collapsed == ["watch.main.displays"]
    ex.expand()
    assert ex.collapsed == [] and ex.graph["collapsed"] == {}
    with pytest.raises(UnknownStateError) as raised:
        ex.collapse("main.displays.time")  # atomic: nothing to collapse
    assert raised.value.code == "unknown-state" and "main.displays.time" in str(raised.value)
    assert ex.collapsed == []


@pytest.mark.parametrize(
    "message",
    [
        {"kind": "collapse", "state": "<img src=x onerror=alert(1)>", "collapsed": True},
        {"kind": "collapse", "state": "watch.main.displays.time", "collapsed": True},
        {"kind": "collapse", "state": DISPLAYS, "collapsed": "yes"},
        {"kind": "collapse", "state": ["watch.main.displays"], "collapsed": True},
        {"kind": "collapse"},
    ],
)
def test_a_collapse_message_that_names_no_collapsible_state_changes_nothing(watch: Any, message: Any) -> None:
    ex = Explorer(watch, watch_run(watch, 3))
    before = ex.graph
    ex._on_message(ex, message, [])
    assert ex.collapsed == [] and ex.graph == before


def test_a_collapse_message_collapses_and_expands(watch: Any) -> None:
    ex = Explorer(watch, watch_run(watch, 3))
    ex._on_message(ex, {"kind": "collapse", "state": DISPLAYS, "collapsed": True}, [])
    assert ex.collapsed == [DISPLAYS]
    ex._on_message(ex, {"kind": "collapse", "state": DISPLAYS, "collapsed": False}, [])
    assert ex.collapsed == []
