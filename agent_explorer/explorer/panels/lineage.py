"""The lineage: the recording and its branches beside the slider, which line is on view, and how two lines
compare.

Owns `lineage` (the tree, and the fork points of the line on view for the track), `comparison` (the last
`compare`) and `info` (what the header names: machine, version, thread, line). Forks live in memory; nothing
here writes to a store except `Branch.save`, which the user calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ...errors import AgentError
from ..branches import Branch, BranchComparison, Lineage, adopt_thread
from ..events import LineChanged, LineGrew
from ..protocol import CheckoutMessage, Info
from ..wire import jsonable
from .base import Handler, Panel, Traits

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["LineagePanel"]


class LineagePanel(Panel):
    TRAITS: ClassVar[tuple[str, ...]] = ("lineage", "comparison", "info")

    def __init__(self, session: Session, traits: Traits) -> None:
        super().__init__(session, traits)
        machine, compare_with = session.machine, session.compare_with
        traits.set("info", {
            "machineId": str(getattr(machine, "id", session.definition.get("id"))),
            "machineVersion": str(getattr(machine, "version", "")),
            "threadId": session.root.thread_id,
            "compareWith": str(getattr(compare_with, "version", "")) if compare_with is not None else None,
            "line": session.root.name,
        })
        session.subscribe(LineChanged, self._line_changed)
        session.subscribe(LineGrew, lambda _: self.draw())  # the tree shows each line's length

    def handlers(self) -> Mapping[str, Handler]:
        return {"checkout": self._on_checkout}

    # -- the tree ----------------------------------------------------------------------------------------

    def fork(self, at: int, name: str | None = None) -> Branch:
        with self.session.lock:
            branch = self.session.line.fork(at, name=name)
            self.draw()
        return branch

    def lineage(self) -> Lineage:
        self.draw()
        return Lineage(self.session.root, self.session.root.descendants(), self.session.line)

    def draw(self) -> None:
        root, line = self.session.root, self.session.line
        forks = root.descendants()
        if not forks:
            self.traits.set("lineage", {})
            return
        payload: dict[str, Any] = dict(Lineage(root, forks, line).to_json())
        payload["forks"] = sorted({b.forked_at - 1 for b in forks if b.parent is line})
        self.traits.set("lineage", payload)

    def checkout(self, branch: Branch | None, index: int | None = None) -> Branch:
        """View `branch` (None: the recording) at `index` (default: its last entry), through the session."""
        root = self.session.root
        line = root if branch is None else branch
        if line is not root and line not in root.descendants():
            raise AgentError(f"{line!r} is not a branch of this explorer", code="invalid-argument")
        return self.session.show(line, index)

    def _on_checkout(self, content: CheckoutMessage) -> None:
        name = content["branch"]
        found = next((b for b in self.session.lines() if b.name == name), None)
        if found is not None:
            self.session.show(found)

    def _line_changed(self, changed: LineChanged) -> None:
        line = changed.line
        current: Info = self.traits.get("info")
        info: Info = {**current, "threadId": line.thread_id or self.session.root.thread_id,
                      "line": line.name}
        self.traits.set("info", info)
        self.traits.set("comparison", {})
        self.draw()

    # -- comparing two lines -----------------------------------------------------------------------------

    def compare(self, branch: Branch) -> BranchComparison:
        line = self.session.line
        result = line.diff(branch)
        payload: dict[str, Any] = dict(result.to_json())
        payload["diff"] = jsonable(payload["diff"][:200])
        payload["eventA"], payload["eventB"] = jsonable(payload["eventA"]), jsonable(payload["eventB"])
        payload["lineName"] = line.name
        payload["branch"] = {
            "threadId": branch.thread_id,
            "name": branch.name,
            "appended": [
                {"index": r.index, "type": r.entry.get("event", {}).get("type"), "ignored": r.ignored}
                for r in branch.appended[-50:]
            ],
        }
        self.traits.set("comparison", payload)
        return result

    # -- threads of the store ----------------------------------------------------------------------------

    def add_thread(self, thread_id: str) -> Branch:
        store, root = self.session.store, self.session.root
        if store is None:
            raise AgentError("add_thread needs an explorer opened with Explorer.from_store", code="invalid-argument")
        entries = list(store.sync.read(thread_id))
        branch = adopt_thread(root, thread_id, entries) if entries else None
        if branch is None:
            raise AgentError(
                f"thread {thread_id!r} shares no entry with {root.thread_id!r}: it is not a fork of this run",
                code="invalid-fork",
            )
        self.draw()
        return branch

    def find_forks(self, limit: int = 1_000) -> list[Branch]:
        if self.session.store is None:
            raise AgentError("find_forks needs an explorer opened with Explorer.from_store", code="invalid-argument")
        root = self.session.root
        first = root.entries[0].get("id")
        known = {b.thread_id for b in [root, *root.descendants()]}
        found = []
        sync = self.session.store.sync
        for info in sync.list_threads(limit=limit):
            thread = info.thread_id
            if thread in known:
                continue
            head = sync.read(thread, 0, 1)
            if head and head[0].get("id") == first:
                found.append(self.add_thread(thread))
        return found
