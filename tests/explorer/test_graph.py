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
    EDGE_FONT_SIZE,
    NODE_FONT_SIZE,
    active_state_ids,
    build_graph,
    iter_nodes,
    iter_transitions,
    transition_label,
)

HERE = Path(__file__).parent
JS_DIR = HERE.parents[1] / "js"
XSS = "<img src=x onerror=alert(1)>"


def render_with_viz(dot: str, tmp_path: Path, rankdir: str | None = None) -> dict[str, Any]:
    """Lay `dot` out with viz-js (Graphviz in WebAssembly, as the browser does) in Node; its result object.

    `rankdir` is passed as the browser passes it: a default graph attribute (viz-js `graphAttributes`)."""
    if (
        shutil.which("node") is None
        or not (JS_DIR / "node_modules" / "@viz-js" / "viz").exists()
    ):
        pytest.skip("node or js/node_modules missing (run `npm ci` in js/)")
    dot_file = tmp_path / "g.dot"
    dot_file.write_text(dot)
    script = (
        "import { instance } from '@viz-js/viz'; import { readFileSync } from 'node:fs';"
        "const options = { format: 'svg' }; if (process.argv[2]) options.graphAttributes = { rankdir: process.argv[2] };"
        "const r = (await instance()).render(readFileSync(process.argv[1], 'utf8'), options);"
        "process.stdout.write(JSON.stringify({ status: r.status, errors: r.errors, output: r.output }));"
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script, str(dot_file), rankdir or ""],
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
    # deep history is H*, final is a rounded box with a second border (no longer a circle sized by its label)
    assert re.search(r'label="H\*" class="state history"', dot)
    assert re.search(r'label=done class="state final".*peripheries=2 shape=box style=rounded', dot)
    assert "doublecircle" not in dot
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
        (
            {"eventType": "D", "guard": {"type": "xstate.stateIn", "params": {"stateValue": "#watch.main.displays.alarm1"}}},
            "D [in #…displays.alarm1]",
        ),
        (
            {"eventType": "D", "guard": {"type": "xstate.stateIn", "params": {"stateValue": {"main": "alarm1"}}}},
            "D [in main.alarm1]",
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
        "state-in-id",
        "state-in-value",
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


SVG = "{http://www.w3.org/2000/svg}"
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def shapes(svg: str) -> dict[str, dict[str, Any]]:
    """Each drawn node of a Graphviz SVG: its id, classes, outline box [x0, y0, x1, y1] (all its borders)
    and the text of its label lines, read from the path / polygon / ellipse coordinates Graphviz wrote."""
    import xml.etree.ElementTree as ET

    out: dict[str, dict[str, Any]] = {}
    for g in ET.fromstring(svg).iter(f"{SVG}g"):
        if "node" not in (g.get("class") or "").split():
            continue
        xs: list[float] = []
        ys: list[float] = []
        for el in g.iter():
            if el.tag in (f"{SVG}path", f"{SVG}polygon"):
                nums = [float(n) for n in NUMBER.findall(el.get("d") or el.get("points") or "")]
                xs += nums[0::2]
                ys += nums[1::2]
            elif el.tag == f"{SVG}ellipse":
                cx, cy, rx, ry = (float(el.get(k) or 0) for k in ("cx", "cy", "rx", "ry"))
                xs += [cx - rx, cx + rx]
                ys += [cy - ry, cy + ry]
        texts = ["".join(t.itertext()) for t in g.iter(f"{SVG}text")]
        out[str(g.get("id")).replace("&#45;", "-")] = {
            "class": g.get("class"),
            "box": [min(xs), min(ys), max(xs), max(ys)],
            "texts": texts,
        }
    return out


def test_the_dot_sets_label_sizes_and_leaves_the_direction_to_the_browser(definition: dict[str, Any]) -> None:
    """No rankdir in the DOT: the widget lays the chart out both ways and keeps the one that reads larger
    (a rankdir written here would override its choice); labels are 13 pt (states) and 11 pt (transitions)."""
    dot = build_graph(definition, token="t").dot
    assert "rankdir" not in dot
    assert re.search(rf"\bnode \[[^\]]*fontsize={NODE_FONT_SIZE}\b", dot)
    assert re.search(rf"\bedge \[[^\]]*fontsize={EDGE_FONT_SIZE}\b", dot)
    assert (NODE_FONT_SIZE, EDGE_FONT_SIZE) == (13, 11)


def machine_definition(states: dict[str, Any]) -> dict[str, Any]:
    """A definition as the engine writes one, for charts this file builds by hand."""
    from agent_explorer.engine import setup

    return dict(
        setup(guards={"officeHours": lambda c, e, p: True, "<i>": lambda c, e, p: True}).create_machine(
            {"id": "m", "initial": next(iter(states)), "context": {}, "states": states}
        ).definition
    )


def test_a_guard_gets_its_own_label_line_and_stays_quoted_text() -> None:
    """`EVENT [guard]` is drawn on two lines (a guarded edge's label half as wide); each line is escaped on
    its own, so an HTML-looking event or guard cannot turn the joined label into an HTML-like label."""
    d = machine_definition(
        {
            "ready": {
                "on": {
                    "REQUEST_CALL": [{"target": "now", "guard": "officeHours"}, {"target": "later"}],
                    "<b>": {"target": "later", "guard": "<i>"},
                }
            },
            "now": {"type": "final"},
            "later": {"type": "final"},
        }
    )
    graph = build_graph(d, token="t")
    assert 'label="REQUEST_CALL\\n[officeHours]"' in graph.dot
    assert 'label=REQUEST_CALL class=transition' in graph.dot  # the unguarded one: one line
    assert 'label="<b>\\n[<i>]"' in graph.dot and "label=<" not in graph.dot
    # the table, tooltips and coverage legend keep the one-line form
    assert sorted(graph.labels.values()) == ["<b> [<i>]", "REQUEST_CALL", "REQUEST_CALL [officeHours]", "initial"]
    assert 'tooltip="REQUEST_CALL [officeHours]"' in graph.dot


def test_a_states_targetless_transitions_share_one_self_loop() -> None:
    """Graphviz sets several self-loops' labels side by side (one unreadable run-on line): a state's
    targetless transitions become one dotted loop with a line each, and `lines` says which line is whose."""
    from agent_explorer.samples import research_agent

    graph = build_graph(research_agent.definition, token="t")
    loops = [tid for tid in graph.lines]
    assert len(loops) == 6
    assert {graph.edges[tid][0] for tid in loops} == {graph.edges[loops[0]][0]}  # one svg element
    assert [graph.lines[tid] for tid in loops] == list(range(6))
    assert [graph.labels[tid] for tid in loops] == [
        f"{kind}: branch{n}" for n in range(3) for kind in ("done", "error")
    ]
    assert graph.dot.count('class="transition loop"') == 1
    assert graph.to_json()["lines"] == graph.lines
    # a single targetless transition keeps its own loop (and needs no line index)
    single = build_graph(json.loads((HERE / "sample_definition.json").read_text()), token="t")
    assert single.lines == {} and "transition loop" not in single.dot
    assert single.dot.count("style=dotted") == 2


@pytest.mark.node
def test_a_shared_loop_draws_its_lines_in_the_order_lines_names(tmp_path: Path) -> None:
    """The widget marks the taken transition's line as the n-th <text> of the loop: check Graphviz's order."""
    from agent_explorer.samples import planner_agent, research_agent

    for machine in (research_agent, planner_agent):
        graph = build_graph(machine.definition, token="t")
        result = render_with_viz(graph.dot, tmp_path)
        import xml.etree.ElementTree as ET

        for g in ET.fromstring(result["output"]).iter(f"{SVG}g"):
            if "loop" in (g.get("class") or ""):
                texts = ["".join(t.itertext()) for t in g.iter(f"{SVG}text")]
                svg_id = str(g.get("id"))
                owners = sorted((n, tid) for tid, n in graph.lines.items() if graph.edges[tid][0] == svg_id)
                assert texts == [graph.labels[tid] for _, tid in owners] and len(texts) >= 3


def median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if len(ordered) % 2 else (ordered[len(ordered) // 2 - 1] + ordered[len(ordered) // 2]) / 2


CHART_MACHINES = [*SAMPLE_MACHINES, "research:research_agent", "planner:planner_agent"]


@pytest.mark.node
@pytest.mark.parametrize("rankdir", ["TB", "LR"])
@pytest.mark.parametrize("ref", ["support:support_agent", "research:research_agent", "planner:planner_agent"])
def test_final_states_are_no_larger_than_a_plain_state(ref: str, rankdir: str, tmp_path: Path) -> None:
    """A final state is as tall as the chart's other states (no more label-sized circles), and as wide as a
    plain state with the same label would be: the same chart with its finals made atomic is the yardstick."""
    import importlib

    module, attr = ref.split(":")
    definition = getattr(importlib.import_module(f"agent_explorer.samples.{module}"), attr).definition
    graph = build_graph(definition, token="t")
    drawn = shapes(render_with_viz(graph.dot, tmp_path, rankdir)["output"])
    plain = copy.deepcopy(definition)
    for node in iter_nodes(plain):
        if node.get("type") == "final":
            node["type"] = "atomic"
    twin = shapes(render_with_viz(build_graph(plain, token="t").dot, tmp_path, rankdir)["output"])
    finals = [n for n in drawn.values() if "final" in n["class"]]
    atomic = [n for n in drawn.values() if "atomic" in n["class"]]
    assert finals and atomic
    heights = [n["box"][3] - n["box"][1] for n in atomic]
    for svg_id, final in drawn.items():
        if "final" not in final["class"]:
            continue
        width = final["box"][2] - final["box"][0]
        height = final["box"][3] - final["box"][1]
        assert height <= median(heights) + 0.5, (final["texts"], height, heights)
        twin_box = twin[svg_id]["box"]
        assert width <= twin_box[2] - twin_box[0] + 0.5, (final["texts"], width)


@pytest.mark.node
@pytest.mark.parametrize("ref", CHART_MACHINES, ids=[r.split(":")[1] for r in CHART_MACHINES])
def test_the_browser_gets_a_different_drawing_per_direction(ref: str, tmp_path: Path) -> None:
    """The direction the browser passes (viz-js graphAttributes) takes effect: the DOT sets none itself."""
    import importlib

    module, attr = ref.split(":")
    machine = getattr(importlib.import_module(f"agent_explorer.samples.{module}"), attr)
    dot = build_graph(machine.definition, token="t").dot
    extents = set()
    for rankdir in ("TB", "LR"):
        svg = render_with_viz(dot, tmp_path, rankdir)["output"]
        match = re.search(r'viewBox="([^"]+)"', svg)
        assert match
        extents.add(match.group(1))
    assert len(extents) == 2
