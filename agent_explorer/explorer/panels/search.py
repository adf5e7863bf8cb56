"""Search: a query over every event and every context of the line on view, its hits paged to the panel and
marked on the slider track.

Owns `search_results` (one page of hits, plus the marks the track draws). A query typed in the widget on a long
log runs on a worker thread (the kernel keeps answering; the panel shows "searching… n%"; its writes go through
the session like any other); a newer query supersedes it at its next progress report. Read-only over the log.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ...errors import AgentError
from ..events import LineChanged
from ..protocol import SearchMessage, SearchPageMessage, SearchResults
from ..search import (
    MARKS_CAP,
    SearchHit,
    SearchHits,
    SearchQuery,
    fold_contexts,
    hit_marks,
    hit_ranges,
    search_log,
    search_page,
)
from .base import Handler, Panel, Traits

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["BACKGROUND_OVER", "SearchPanel"]

BACKGROUND_OVER = 50_000  # longer logs are searched on a worker thread when the panel asks


class _Superseded(Exception):
    """A newer search was asked for: this one stops at its next progress report."""


class SearchPanel(Panel):
    TRAITS: ClassVar[tuple[str, ...]] = ("search_results",)

    def __init__(self, session: Session, traits: Traits) -> None:
        super().__init__(session, traits)
        self.hits: SearchHits = SearchHits()
        self._generation = 0
        self.worker: threading.Thread | None = None
        session.subscribe(LineChanged, self._line_changed)

    def handlers(self) -> Mapping[str, Handler]:
        return {"search": self._on_search, "search-page": self._on_page}

    def search(self, query: SearchQuery, *, limit: int | None = None, mark: int = MARKS_CAP,
               progress: Callable[[int, int], None] | None = None,
               current: Callable[[], bool] = lambda: True) -> SearchHits:
        """Search the whole line in Python, page the hits, mark them on the track (`current()` is asked before
        publishing: a search superseded meanwhile publishes nothing)."""
        session = self.session
        try:
            found = search_log(session.entries, query, fold_contexts(session.machine, session.entries), limit=limit,
                               progress=progress)
        except AgentError as error:
            if current():
                self.traits.set("search_results", search_page([], query, error=error.message))
            raise
        hits = SearchHits(found)
        with session.lock:  # asked and published at once: a line switch in between would make these hits stale
            if current():
                self.hits = hits
                self._publish(hits, query, 0, mark)
        return hits

    def _publish(self, hits: list[SearchHit], query: SearchQuery, offset: int, mark: int = MARKS_CAP) -> None:
        page: dict[str, Any] = dict(search_page(hits, query, offset))
        page["marks"] = hit_marks(hits, mark) if mark else []
        page["ranges"] = hit_ranges(hits) if mark else []
        self.traits.set("search_results", page)

    def _on_page(self, content: SearchPageMessage) -> None:
        saved = self.traits.get("search_results").get("query") or {}
        query = SearchQuery(**{k: v for k, v in saved.items() if k in ("text", "regex", "scope", "case")},
                            path=saved.get("path") or None, type=saved.get("type") or None)
        self._publish(self.hits, query, content["offset"])

    def _on_search(self, content: SearchMessage) -> None:
        text = content["text"]
        self._generation += 1
        generation = self._generation
        if not text:
            self.clear()
            return
        query = SearchQuery(text, content.get("regex", False), content.get("path") or None,
                            content.get("scope") or "both", content.get("case", False))
        if len(self.session.entries) <= BACKGROUND_OVER:
            try:
                self.search(query)
            except AgentError:
                pass  # the error is on the search_results traitlet, where the panel shows it
            return
        started: SearchResults = {"query": query.to_json(), "pending": True, "progress": 0.0}
        self.traits.set("search_results", started)

        def progress(done: int, total: int) -> None:
            if self._generation != generation:
                raise _Superseded
            running: SearchResults = {"query": query.to_json(), "pending": True, "progress": done / max(1, total)}
            self.traits.set("search_results", running)

        def work() -> None:
            try:
                self.search(query, progress=progress, current=lambda: self._generation == generation)
            except (_Superseded, AgentError):
                pass
            except Exception as error:  # noqa: BLE001 - a thread has no caller: the panel shows it
                if self._generation == generation:
                    self.traits.set("search_results", search_page([], query, error=f"{type(error).__name__}: {error}"))

        self.worker = threading.Thread(target=work, name="agent-explorer-search", daemon=True)
        self.worker.start()

    def clear(self) -> None:
        self.hits = SearchHits()
        self.traits.set("search_results", {})

    def _line_changed(self, _event: LineChanged) -> None:
        self._generation += 1  # hits were indices of the line left
        self.clear()
