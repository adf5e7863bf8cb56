"""The event table: one page of rows at a time, filtered by type and text, following the cursor.

Owns `table` (the page the browser draws, with the filter's hits for the slider track) and `table_types` (the
type filter's menu). Python owns the window: when the cursor leaves the page, the page moves with it, and a new
filter (or clearing one) opens on the cursor's place, not on the first page. Every read of the session's
`EventTable` (which caches filters) happens under the session's lock: a followed run refreshes it from its thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from ..events import CursorMoved, DivergenceFound, IndexesReady, LineChanged, LineGrew
from ..protocol import TableMessage
from ..search import MARKS_CAP, thin
from .base import Handler, Panel, Traits

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["TablePanel"]


class TablePanel(Panel):
    TRAITS: ClassVar[tuple[str, ...]] = ("table", "table_types")

    def __init__(self, session: Session, traits: Traits) -> None:
        super().__init__(session, traits)
        self._divergent: frozenset[int] = frozenset()
        # A long log opens before its one-pass indexes exist: the type counts come with them (IndexesReady).
        traits.set("table_types", session.table.types() if session.usage is not None else [])
        self.show_page(0)
        session.subscribe(CursorMoved, lambda moved: self.follow(moved.index))
        session.subscribe(LineChanged, self._line_changed)
        session.subscribe(LineGrew, self._grew)
        session.subscribe(DivergenceFound, self._divergence)
        session.subscribe(IndexesReady, lambda _: self._types_ready())

    def handlers(self) -> Mapping[str, Handler]:
        return {"table": self._on_page}

    def _on_page(self, content: TableMessage) -> None:
        limit = content["limit"] or self.session.page_size
        type_filter = content.get("type") or None
        text = content.get("text") or None
        with self.session.lock:
            if (type_filter, text) != self._query():
                self._show_cursor_place(limit, type_filter, text)  # a new filter, or one cleared
            else:
                self.show_page(content["offset"], limit, type_filter, text)

    def _show_cursor_place(self, limit: int, type_filter: str | None, text: str | None) -> None:
        """The page holding the cursor's row under these filters (or the first match after it)."""
        session = self.session
        self.show_page(session.table.anchor(session.index, type_filter, text), limit, type_filter, text)

    def show_page(self, offset: int, limit: int | None = None, type_filter: str | None = None,
                  text: str | None = None) -> None:
        with self.session.lock:
            table = self.session.table
            table.divergent = self._divergent
            page = table.page(offset, limit or self.session.page_size, type_filter, text)
            hits = table.matches(type_filter, text)
            page["marks"] = [] if hits is None else thin(hits, MARKS_CAP)
            self.traits.set("table", page)

    def _query(self) -> tuple[str | None, str | None]:
        query = self.traits.get("table").get("query") or {}
        return query.get("type") or None, query.get("text") or None

    def follow(self, index: int) -> None:
        """Keep the cursor's row inside the window (a filter that hides it leaves the page where it is)."""
        current = self.traits.get("table")
        type_filter, text = self._query()
        position = self.session.table.position_of(index, type_filter, text)
        if position is None:
            return
        offset = int(current.get("offset", 0))
        limit = int(current.get("limit", self.session.page_size))
        rows = current.get("rows") or []
        if rows and offset <= position < offset + len(rows):
            return
        self.show_page(position, limit, type_filter, text)  # the page holding it (the last page is full)

    def refresh(self) -> None:
        """Redraw the current page (rows changed: divergence flags, new entries), keeping the cursor's row on it
        when it was. Why the second step: the last page starts wherever it must to end at the last row (offset
        901 of 1,001 rows), and redrawing that offset re-aligns it to a page boundary (900), one row short of
        the cursor at the tail; a followed run redraws after every batch, so the table fell a page behind."""
        current = self.traits.get("table")
        cursor = self.session.index
        showed_cursor = any(row.get("index") == cursor for row in current.get("rows") or [])
        type_filter, text = self._query()
        self.show_page(int(current.get("offset", 0)), int(current.get("limit", self.session.page_size)),
                       type_filter, text)
        if showed_cursor:
            self.follow(cursor)

    def _divergence(self, found: DivergenceFound) -> None:
        if found.divergent == self._divergent:
            return  # the same flags: the page on view is right already
        self._divergent = found.divergent
        if self.traits.get("table").get("rows"):
            self.refresh()

    def _types_ready(self) -> None:
        self.traits.set("table_types", self.session.table.types())

    def _grew(self, _event: LineGrew) -> None:
        # Before the cursor moves (its CursorMoved comes next): the move then pages the table onto the new tail.
        self._types_ready()
        self.refresh()

    def filter(self, type_filter: str | None, text: str | None) -> None:
        """Filter the table (as the search does for a plain text query), on the cursor's place."""
        with self.session.lock:
            self._show_cursor_place(int(self.traits.get("table").get("limit") or self.session.page_size),
                                    type_filter, text)

    def _line_changed(self, _event: LineChanged) -> None:
        self._divergent = frozenset()
        self._types_ready()
        self.show_page(0)
