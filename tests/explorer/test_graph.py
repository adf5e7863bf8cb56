"""The statechart DOT: structure (clusters, regions, markers), id maps, label escaping, real Graphviz layout."""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent_explorer.explorer.graph import (
    active_state_ids,
    build_graph,
    iter_nodes,
    iter_transitions,
    transition_label,
)

HERE = Path(__file__).parent
JS_DIR = HERE.parents[1] / "js"
XSS = "<img src=x onerror=alert(1)>"


def render_with_viz(dot: str, tmp_path: Path) -> dict[str, Any]:
    """Lay `dot` out with viz-js (Graphviz in WebAssembly, as the browser does) in Node; its result object."""
    if (
        shutil.which("node") is None
        or not (JS_DIR / "node_modules" / "@viz-js" / "viz").exists()
    ):
        pytest.skip("node or js/node_modules missing (run `npm ci` in js/)")
    dot_file = tmp_path / "g.dot"
    dot_file.write_text(dot)
    script = (
        "import { instance } from '@viz-js/viz'; import { readFileSync } from 'node:fs';"
        "const r = (await instance()).render(readFileSync(process.argv[1], 'utf8'), { format: 'svg' });"
        "process.stdout.write(JSON.stringify({ status: r.status, errors: r.errors, output: r.output }));"
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script, str(dot_file)],
        cwd=JS_DIR,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.fixture
def definition() -> dict[str, Any]:
    return json.loads((HERE / "sample_definition.json").read_text())


def test_every_state_and_transition_gets_an_svg_id(definition: dict[str, Any]) -> None:
    graph = build_graph(definition, token="t")
    state_ids = {node["id"] for node in iter_nodes(definition)}
    assert set(graph.nodes) == state_ids
    transition_ids = {t["id"] for t in iter_transitions(definition)}
    initial = {
        "#initial",
        "#agent.working.draft:initial",
        "#agent.working.monitor:initial",
    }
    assert set(graph.edges) == transition_ids | initial
    svg_ids = list(graph.nodes.values()) + [
        i for ids in graph.edges.values() for i in ids
    ]
    assert len(svg_ids) == len(set(svg_ids)), "svg ids must be unique"
    for svg_id in svg_ids:
        assert (
            svg_id.startswith("t-")
            and f'id="{svg_id}"' in graph.dot
            or svg_id == "t-root"
        )


def test_structure_clusters_regions_markers(definition: dict[str, Any]) -> None:
    dot = build_graph(definition, token="t").dot
    # compound and parallel states are clusters; the parallel state's regions are dashed
    assert dot.count("subgraph cluster_") == 3
    assert re.search(r'class="state parallel" id="t-s\d+" label=working', dot)
    assert dot.count('style="rounded,dashed"') == 2
    # deep history is H*, final is a double circle
    assert re.search(r'label="H\*" class="state history"', dot)
    assert re.search(r'label=done class="state final".*shape=doublecircle', dot)
    # one initial marker per compound level (root, draft, monitor), none for the parallel state
    assert dot.count("shape=point width=0.09") == 3
    assert dot.count("class=initial id=") == 3
    # a transition into a compound state is clipped at its cluster
    assert re.search(r"label=START class=transition id=\"t-t\d+\" lhead=cluster_", dot)


@pytest.mark.parametrize(
    ("transition", "label"),
    [
        ({"eventType": "START"}, "START"),
        ({"eventType": "APPROVE", "guard": {"type": "isOwner"}}, "APPROVE [isOwner]"),
        ({"eventType": "xstate.after.500.agent.a"}, "after 500ms"),
        ({"eventType": "xstate.after.retry.agent.a"}, "after retry"),
        ({"eventType": "", "guard": {"type": "overBudget"}}, "always [overBudget]"),
        ({"eventType": "xstate.done.actor.writer"}, "done: writer"),
        ({"eventType": "xstate.error.actor.writer"}, "error: writer"),
        (
            {
                "eventType": "GO",
                "guard": {"type": "xstate.not", "params": {"guard": {"type": "busy"}}},
            },
            "GO [!busy]",
        ),
        (
            {
                "eventType": "GO",
                "guard": {
                    "type": "xstate.or",
                    "params": {"guards": [{"type": "a"}, {"type": "b"}]},
                },
            },
            "GO [(a || b)]",
        ),
    ],
    ids=[
        "event",
        "guard",
        "after-ms",
        "after-named",
        "always",
        "done",
        "error",
        "not",
        "or",
    ],
)
def test_transition_labels(transition: dict[str, Any], label: str) -> None:
    assert transition_label(transition) == label


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("idle", ["agent", "agent.idle"]),
        (
            {"working": {"draft": "review", "monitor": "ok"}},
            [
                "agent",
                "agent.working",
                "agent.working.draft",
                "agent.working.draft.review",
                "agent.working.monitor",
                "agent.working.monitor.ok",
            ],
        ),
        ("nowhere", ["agent"]),
    ],
    ids=["atomic", "parallel", "unknown"],
)
def test_active_state_ids(
    definition: dict[str, Any], value: Any, expected: list[str]
) -> None:
    assert active_state_ids(definition, value) == expected


def hostile(definition: dict[str, Any]) -> dict[str, Any]:
    """The sample with a state key, an event type and a guard name that try to be HTML / break DOT."""
    d = copy.deepcopy(definition)
    idle = d["states"]["idle"]
    idle["key"] = XSS
    idle["on"][XSS] = [
        {
            "id": "agent.idle:on:xss:0",
            "source": "agent.idle",
            "eventType": XSS,
            "target": ["#agent.done"],
            "guard": {"type": '"];evil[label="x\\'},
            "actions": [],
            "reenter": False,
        }
    ]
    return d


def test_hostile_names_stay_quoted_text_in_dot(definition: dict[str, Any]) -> None:
    dot = build_graph(hostile(definition), token="t").dot
    # never an HTML-like label (<...> unquoted), always a quoted string
    assert "label=<" not in dot
    assert f'label="{XSS}"' in dot
    # the guard's quote is escaped, so it cannot close the label and open a new statement
    assert '\\"];evil[' in dot


@pytest.mark.node
def test_hostile_names_render_as_escaped_svg_text(
    definition: dict[str, Any], tmp_path: Path
) -> None:
    """Real Graphviz (viz-js WebAssembly, as in the browser) lays the DOT out; labels come back as text."""
    graph = build_graph(hostile(definition), token="t")
    result = render_with_viz(graph.dot, tmp_path)
    assert result["status"] == "success", result["errors"]
    svg = result["output"]
    assert "&lt;img src=x onerror=alert(1)&gt;" in svg
    assert "<img" not in svg
    # no node was smuggled in through the guard name
    assert "<title>evil</title>" not in svg
    for svg_id in graph.nodes.values():
        if svg_id != "t-root":
            assert f'id="{svg_id.replace("-", "&#45;")}"' in svg


SAMPLE_MACHINES = [
    "inbox:inbox_agent",
    "planner:planner_agent",
    "research:research_agent",
    "support:support_agent_v2",
]


@pytest.mark.node
@pytest.mark.parametrize(
    "ref", SAMPLE_MACHINES, ids=[r.split(":")[1] for r in SAMPLE_MACHINES]
)
def test_the_sample_agents_lay_out_with_every_state_and_transition(
    ref: str, tmp_path: Path
) -> None:
    """Real agent charts (invokes, decisions, plans, timers) go through real Graphviz without errors."""
    import importlib

    if (
        shutil.which("node") is None
        or not (JS_DIR / "node_modules" / "@viz-js" / "viz").exists()
    ):
        pytest.skip("node or js/node_modules missing (run `npm ci` in js/)")
    module, attr = ref.split(":")
    machine = getattr(importlib.import_module(f"agent_explorer.samples.{module}"), attr)
    graph = build_graph(machine.definition, token="t")
    assert set(graph.nodes) == {n["id"] for n in iter_nodes(machine.definition)}
    assert {t["id"] for t in iter_transitions(machine.definition)} <= set(graph.edges)
    result = render_with_viz(graph.dot, tmp_path)
    assert result["status"] == "success", result["errors"]
    assert [e for e in result["errors"] if e.get("level") == "error"] == []
    for ids in graph.edges.values():
        for svg_id in ids:
            assert f'id="{svg_id.replace("-", "&#45;")}"' in result["output"]
