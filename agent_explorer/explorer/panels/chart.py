"""The statechart panel: the DOT the browser lays out, and which compound states are drawn collapsed.

A chart too large to read whole reads in parts: collapsing a compound or parallel state redraws it as one box
that names its active child (graph.py), from a click on the state's title in the chart or from Python
(`Explorer.collapse` / `expand`). The message is untrusted: anything but a collapsible state's id is ignored.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ...errors import AgentError
from ..statechart import collapsible_states, iter_nodes
from .base import Handler, Panel, Traits

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["ChartPanel", "UnknownStateError"]


class UnknownStateError(AgentError, ValueError):
    """A state named to collapse or expand is not a compound or parallel state of the machine."""

    code = "unknown-state"


class ChartPanel(Panel):
    """Owns the `graph` traitlet: built once per set of collapsed states, laid out in the browser."""

    TRAITS = ("graph",)

    def __init__(self, session: Session, traits: Traits) -> None:
        super().__init__(session, traits)
        self._token = "ae" + secrets.token_hex(3)  # two explorers on one page never share an SVG id
        self._collapsible = collapsible_states(session.definition)
        self._by_name = _names_of(session.definition, self._collapsible)
        self._collapsed: list[str] = []
        self._draw()

    @property
    def collapsed(self) -> list[str]:
        """The ids of the states drawn collapsed, in document order."""
        return list(self._collapsed)

    def collapse(self, states: Iterable[str]) -> None:
        self._set({*self._collapsed, *(self._resolve(s) for s in states)})

    def expand(self, states: Iterable[str] | None = None) -> None:
        """Expand the states named (all of them when None)."""
        if states is None:
            self._set(set())
            return
        gone = {self._resolve(s) for s in states}
        self._set({s for s in self._collapsed if s not in gone})

    def handlers(self) -> Mapping[str, Handler]:
        return {"collapse": self._on_collapse}

    def _on_collapse(self, content: Mapping[str, Any]) -> None:
        state = content.get("state")
        if not isinstance(state, str) or state not in self._collapsible:
            return
        if content.get("collapsed") is True:
            self._set({*self._collapsed, state})
        elif content.get("collapsed") is False:
            self._set({s for s in self._collapsed if s != state})

    def _resolve(self, name: str) -> str:
        found = self._by_name.get(name.removeprefix("#"))
        if found is None:
            raise UnknownStateError(
                f"{name!r} is not a compound or parallel state of this machine; "
                f"these can be collapsed: {', '.join(self._collapsible) or 'none'}"
            )
        return found

    def _set(self, states: set[str]) -> None:
        ordered = [s for s in self._collapsible if s in states]
        if ordered == self._collapsed and self.traits.get("graph"):
            return
        self._collapsed = ordered
        self._draw()

    def _draw(self) -> None:
        from ..graph import build_graph  # graphviz's DOT writer: the panel imports without it, as analysis does

        self.traits.set("graph", build_graph(self.session.definition, token=self._token, collapsed=self._collapsed).to_json())


def _names_of(definition: Mapping[str, Any], collapsible: list[str]) -> dict[str, str]:
    """Each collapsible state by its id and by its path of keys from the root ("main.displays")."""
    wanted = set(collapsible)
    names: dict[str, str] = {}

    def walk(node: Mapping[str, Any], path: tuple[str, ...]) -> None:
        for child in (node.get("states") or {}).values():
            child_id = str(child.get("id"))
            child_path = (*path, str(child.get("key")))
            if child_id in wanted:
                names.setdefault(".".join(child_path), child_id)
            walk(child, child_path)

    walk(definition, ())
    for node in iter_nodes(definition):  # an id wins over a path that happens to spell it
        if str(node.get("id")) in wanted:
            names[str(node.get("id"))] = str(node.get("id"))
    return names
