"""The statechart as Graphviz DOT, built once from `machine.definition`, plus the id maps the widget needs.

Builds text only (the `graphviz` package's DOT writer; no `dot` binary is run: the browser lays it out with
Graphviz compiled to WebAssembly). Never executes machine code and never trusts names: every label is escaped
so no state key, event type or guard name can become an HTML-like label or a DOT syntax break.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import graphviz

from .protocol import Graph
from .statechart import (
    active_state_ids,
    child_states,
    collapsible_states,
    initial_edge,
    iter_nodes,
    iter_transition_ids,
    iter_transitions,
    label_parts,
    target_id,
    transition_label,
)

__all__ = [
    "StatechartGraph",
    "active_state_ids",
    "build_graph",
    "collapsible_states",
    "initial_edge",
    "iter_nodes",
    "iter_transition_ids",
    "iter_transitions",
]

# Compact, theme-neutral defaults: the widget's CSS recolours fills/strokes by class, so colours here are
# only what a plain SVG viewer (or the static HTML export) would show. Sizes are Graphviz points: the widget
# draws the chart at 0.82-1.1 screen px per point, so 13 pt state and 11 pt transition labels stay at 9 px or more.
# There is no `rankdir`: the browser lays the chart out both ways and keeps the direction that reads larger
# in its panel (viz-js `graphAttributes`; a rankdir written here would override that choice).
# Helvetica because Graphviz's text-width table for it is Arial's, the metrics of the fonts the widget draws
# labels in (Helvetica, Arial, Liberation Sans): boxes are sized for the text the browser actually draws.
FONT = "Helvetica"
NODE_FONT_SIZE = 13
EDGE_FONT_SIZE = 11
_GRAPH_ATTRS = {
    "compound": "true",
    "fontname": FONT,
    "fontsize": str(NODE_FONT_SIZE),
    "nodesep": "0.3",
    "ranksep": "0.4",
    "bgcolor": "transparent",
}
_NODE_ATTRS = {
    "fontname": FONT,
    "fontsize": str(NODE_FONT_SIZE),
    "shape": "box",
    "style": "rounded",
    "height": "0.3",
}
_EDGE_ATTRS = {"fontname": FONT, "fontsize": str(EDGE_FONT_SIZE), "arrowsize": "0.6"}
# A final state is a rounded box with a second border, as tall as any other state: the inner box has no
# vertical margin and the outer border sits 4 pt outside it (Graphviz's periphery gap), so the outline is
# the size of a plain state with the same label (margin 0.11 in = 8 pt = 4 pt + 4 pt gap).
_FINAL_ATTRS = {
    "shape": "box",
    "style": "rounded",
    "peripheries": "2",
    "margin": "0.055,0",
    "width": "0.3",
    "height": "0.2",
}



@dataclass
class StatechartGraph:
    """DOT source plus the maps from domain ids (state ids, transition ids) to the SVG element ids in it.

    The widget toggles classes on `document.getElementById`-style lookups inside its own root, so the SVG
    ids are prefixed with a per-graph token (two explorers on one page must not collide).
    """

    dot: str
    nodes: dict[str, str] = field(
        default_factory=dict
    )  # state id -> svg id (node or cluster)
    edges: dict[str, list[str]] = field(
        default_factory=dict
    )  # transition id -> svg ids (one per target)
    labels: dict[str, str] = field(
        default_factory=dict
    )  # transition id -> its label, for tables/tooltips
    lines: dict[str, int] = field(
        default_factory=dict
    )  # transition id -> the line naming it, on a state's shared self-loop (see _Builder._loop_into)
    collapsed: dict[str, list[str]] = field(
        default_factory=dict
    )  # state id inside a collapsed state -> [the collapsed state's id, its path from there ("update.sec")]
    collapsible: list[str] = field(default_factory=list)  # compound and parallel states, the root excepted

    def to_json(self) -> Graph:
        return {
            "dot": self.dot,
            "nodes": self.nodes,
            "edges": self.edges,
            "labels": self.labels,
            "lines": self.lines,
            "collapsed": self.collapsed,
            "collapsible": self.collapsible,
        }


def build_graph(
    definition: Mapping[str, Any], *, token: str = "ae", collapsed: Collection[str] = ()
) -> StatechartGraph:
    """Lay the machine out as DOT: clusters for compound states, dashed regions, initial/history/final marks.

    A compound or parallel state named in `collapsed` is drawn as one box: a chart too large to read whole
    reads in parts. Everything inside it maps to that box (it lights when any of them is active, and the
    widget writes the active one's name on its second line), transitions into or out of it end at the box,
    and transitions that stay inside it are not drawn.
    """
    builder = _Builder(token, frozenset(collapsed))
    return builder.build(definition)


def _paths_inside(node: Mapping[str, Any], above: tuple[str, ...]) -> Iterator[tuple[str, tuple[str, ...]]]:
    """`(state id, keys from `node` down to it)` of every state inside `node`, document order."""
    for child in child_states(node):
        path = (*above, str(child.get("key", child.get("id"))))
        yield str(child.get("id")), path
        yield from _paths_inside(child, path)


def _edge_label(transition: Mapping[str, Any]) -> str:
    """The drawn label: the guard on a line of its own, so a guarded edge's label is half as wide."""
    event, guard = label_parts(transition)
    return _lines([event, f"[{guard}]"] if guard else [event])


def _lines(lines: list[str]) -> str:
    """DOT text of centred lines. Each line is escaped on its own and the joined text is marked not-HTML
    again: a concatenation of escaped strings is a plain `str`, which the DOT writer would emit unquoted
    (an HTML-like label) if it looked like `<...>`."""
    text: str = graphviz.nohtml("\\n".join(graphviz.escape(line) for line in lines))
    return text


class _Builder:
    """Walks the definition once; keeps the counters that make SVG ids unique and deterministic."""

    def __init__(self, token: str, collapsed: frozenset[str] = frozenset()) -> None:
        self.token = token
        self.collapsed = collapsed
        self.counter = 0
        self.graph = StatechartGraph(dot="")
        self.anchor: dict[str, str] = {}  # state id -> DOT node name edges attach to
        self.cluster: dict[
            str, str
        ] = {}  # compound state id -> cluster name (for lhead/ltail)
        self.root_id = ""
        self.ancestors: dict[
            str, set[str]
        ] = {}  # state id -> ids of its ancestors (custom ids break dotted paths)

    def fresh(self, kind: str) -> str:
        self.counter += 1
        return f"{self.token}-{kind}{self.counter}"

    def build(self, definition: Mapping[str, Any]) -> StatechartGraph:
        dot = graphviz.Digraph(
            name=graphviz.escape(str(definition.get("id", "machine"))),
            graph_attr=_GRAPH_ATTRS,
            node_attr=_NODE_ATTRS,
            edge_attr=_EDGE_ATTRS,
        )
        root_id = self.root_id = str(definition.get("id"))
        self._index_ancestors(definition, set())
        self.graph.collapsible = collapsible_states(definition)
        # The root is the whole drawing; its svg id is the graph itself (always "active").
        self.graph.nodes[root_id] = f"{self.token}-root"
        self._children_into(dot, definition)
        self._edges_into(dot, definition)
        self.graph.dot = dot.source
        return self.graph

    def _index_ancestors(self, node: Mapping[str, Any], above: set[str]) -> None:
        state_id = str(node.get("id"))
        self.ancestors[state_id] = above
        for child in child_states(node):
            self._index_ancestors(child, above | {state_id})

    def _children_into(self, dot: graphviz.Digraph, parent: Mapping[str, Any]) -> None:
        for child in child_states(parent):
            self._node_into(dot, child, dashed=parent.get("type") == "parallel")
        edge = initial_edge(parent, self.root_id)
        if parent.get("type") != "parallel" and edge is not None and edge[1]:
            # The engine traces the root's initial step as transition "#initial"; nested initial steps
            # are keyed "#<state id>:initial" so a future trace format can light them too.
            key, initial_targets = edge
            marker = self.fresh("i")
            dot.node(
                marker,
                label="",
                shape="point",
                width="0.09",
                height="0.09",
                **{"class": "initial"},
            )
            for target in initial_targets:
                head = self.anchor.get(target)
                if head is None:
                    continue
                svg_id = self.fresh("t")
                self.graph.edges.setdefault(key, []).append(svg_id)
                self.graph.labels[key] = "initial"
                attrs: dict[str, str] = {
                    "class": "initial",
                    "arrowsize": "0.5",
                    "id": svg_id,
                }
                if target in self.cluster:
                    attrs["lhead"] = self.cluster[target]
                dot.edge(marker, head, **attrs)

    def _node_into(
        self, dot: graphviz.Digraph, node: Mapping[str, Any], *, dashed: bool
    ) -> None:
        state_id = str(node.get("id"))
        kind = node.get("type")
        label = graphviz.escape(str(node.get("key", state_id)))
        tooltip = graphviz.escape("#" + state_id)
        if state_id in self.collapsed and child_states(node):
            self._collapsed_into(dot, node, label, tooltip)
            return
        if kind in ("compound", "parallel") or node.get("states"):
            name = "cluster_" + self.fresh("c").replace("-", "_")
            svg_id = self.fresh("s")
            self.cluster[state_id] = name
            self.graph.nodes[state_id] = svg_id
            with dot.subgraph(name=name) as sub:
                style = "rounded,dashed" if dashed else "rounded"
                classes = f"state {kind or 'compound'}" + (" region" if dashed else "")
                sub.attr(
                    label=label,
                    id=svg_id,
                    style=style,
                    tooltip=tooltip,
                    labeljust="l",
                    **{"class": classes},
                )
                # An invisible anchor gives edges something to attach to; lhead/ltail clip them at the border.
                anchor = self.fresh("a")
                sub.node(
                    anchor,
                    label="",
                    shape="point",
                    style="invis",
                    width="0.01",
                    height="0.01",
                )
                self.anchor[state_id] = anchor
                self._children_into(sub, node)
            return
        svg_id = self.fresh("s")
        self.graph.nodes[state_id] = svg_id
        self.anchor[state_id] = svg_id
        attrs: dict[str, str] = {"id": svg_id, "tooltip": tooltip}
        if kind == "final":
            attrs.update(_FINAL_ATTRS, **{"class": "state final"})
        elif kind == "history":
            deep = node.get("history") == "deep"
            attrs.update(
                {"class": "state history"}, shape="circle", style="", fixedsize="true", width="0.32"
            )
            label = graphviz.escape("H*" if deep else "H")
        else:
            attrs["class"] = "state atomic"
        dot.node(svg_id, label=label, **attrs)

    def _collapsed_into(self, dot: graphviz.Digraph, node: Mapping[str, Any], label: str, tooltip: str) -> None:
        """One box for a collapsed state and all inside it. Its second line is sized by Graphviz for the longest
        path inside (the widget writes the active one there), so no name it shows crosses the border."""
        state_id = str(node.get("id"))
        svg_id = self.fresh("s")
        self.graph.nodes[state_id] = svg_id
        self.anchor[state_id] = svg_id
        inside = list(_paths_inside(node, ()))
        for child_id, path in inside:
            self.graph.nodes[child_id] = svg_id
            self.anchor[child_id] = svg_id
            self.graph.collapsed[child_id] = [state_id, ".".join(path)]
        widest = max(("▸ " + ".".join(path) for _, path in inside), key=len, default="▸")
        kind = node.get("type") or "compound"
        dot.node(
            svg_id,
            label=f"{label}\\n{graphviz.escape(widest)}",
            id=svg_id,
            tooltip=tooltip + " (collapsed)",
            peripheries="2",
            **{"class": f"state collapsed {kind}"},
        )

    def _edges_into(self, dot: graphviz.Digraph, definition: Mapping[str, Any]) -> None:
        transitions = [t for t in iter_transition_ids(definition) if not self._hidden(*t)]
        loops: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}
        for tid, source, transition in transitions:
            if not transition.get("target"):
                loops.setdefault(source, []).append((tid, transition))
        for tid, source, transition in transitions:
            group = loops.get(source, [])
            if transition.get("target") or len(group) < 2:
                self._edge_into(dot, tid, source, transition)
            elif group[0][0] == tid:
                self._loop_into(dot, source, group)

    def _hidden(self, tid: str, source: str, transition: Mapping[str, Any]) -> bool:
        """A transition that starts and ends inside one collapsed state (targetless ones included): not drawn,
        but still labelled for tables and tooltips."""
        if source not in self.graph.collapsed:
            return False
        box = self.anchor.get(source)
        if any(self.anchor.get(target_id(t)) != box for t in transition.get("target") or []):
            return False
        self.graph.labels[tid] = transition_label(transition)
        return True

    def _loop_into(
        self, dot: graphviz.Digraph, source: str, group: list[tuple[str, Mapping[str, Any]]]
    ) -> None:
        """A state's targetless transitions as one dotted self-loop, one label line each.

        Why one loop: Graphviz nests a state's self-loops and sets their labels side by side, so six of them
        read as one long run-on line twice the chart's width. `lines` says which line names which
        transition, so the widget can mark the one taken.
        """
        tail = self.anchor.get(source) or self._root_anchor(dot)
        svg_id = self.fresh("t")
        labels = []
        for n, (tid, transition) in enumerate(group):
            label = transition_label(transition)
            self.graph.labels[tid] = label
            self.graph.edges.setdefault(tid, []).append(svg_id)
            self.graph.lines[tid] = n
            labels.append(label)
        dot.edge(
            tail,
            tail,
            id=svg_id,
            style="dotted",
            label=_lines(labels),
            tooltip=_lines(labels),
            **{"class": "transition loop"},
        )

    def _edge_into(
        self, dot: graphviz.Digraph, tid: str, source: str, transition: Mapping[str, Any]
    ) -> None:
        label = transition_label(transition)
        self.graph.labels[tid] = label
        tail = self.anchor.get(source)
        if (
            tail is None
        ):  # the root: transitions on the machine itself start from the top-left marker
            tail = self._root_anchor(dot)
        targets = [target_id(t) for t in transition.get("target") or []]
        svg_ids = self.graph.edges.setdefault(tid, [])
        base = {
            "label": _edge_label(transition),
            "class": "transition",
            "tooltip": graphviz.escape(label),
        }
        if source in self.cluster:
            base["ltail"] = self.cluster[source]
        if not targets:
            # Targetless: the state does not change (e.g. only assigns); drawn as a dotted self-loop.
            svg_id = self.fresh("t")
            svg_ids.append(svg_id)
            attrs = {k: v for k, v in base.items() if k != "ltail"}
            dot.edge(tail, tail, id=svg_id, style="dotted", **attrs)
            return
        for target in targets:
            head = self.anchor.get(target)
            if head is None:
                continue
            if head == tail and (source in self.graph.collapsed or target in self.graph.collapsed):
                continue  # both ends inside one collapsed state: nothing to draw between its box and itself
            svg_id = self.fresh("t")
            svg_ids.append(svg_id)
            attrs = dict(base)
            if target in self.cluster and target != source:
                attrs["lhead"] = self.cluster[target]
            if target == source or target in self.ancestors.get(source, ()):
                attrs.pop("ltail", None)
                attrs.pop("lhead", None)
            dot.edge(tail, head, id=svg_id, **attrs)

    def _root_anchor(self, dot: graphviz.Digraph) -> str:
        name = f"{self.token}-rootanchor"
        if name not in self.anchor.values():
            dot.node(name, label="", shape="point", width="0.05", style="invis")
            self.anchor["\0root"] = name
        return name
