"""`Runs`: a store's runs in one view, an anywidget: one page of rows, counts per status, sort, filters, the
selected thread's `Explorer` under the list, and (with `follow=True`) new and grown threads as they land.

Rows are `summarize_runs` rows (one fold per thread, through the fleet path); this module only decides which
threads fold when (the first page at once, the rest in the background in chunks, then whatever the store's one
watcher reports) and keeps the list (explorer/run_list.py) that the browser sees a page of. Python owns every piece
of state; the front end (js/src/runs.js) draws the traitlets and sends intents. Never writes to the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import ipywidgets
import traitlets

from ..errors import AgentError
from ..eventlog.machine_ref import import_machine
from ..plural import plural
from ..runs import RunSummaries, RunSummary, summarize_runs
from ..stores.base import EventLogStore
from ..stores.urls import open_store
from ..stores.watching import watch_threads
from . import bundle
from .hop import KernelHop
from .prices import Prices
from .protocol import RunsCounts, RunsProgress
from .run_list import RunList, make_filter
from .widget import Explorer, HoppingWidget

__all__ = ["REDRAW_EVERY", "Runs"]

#: Seconds between two redraws of the page while threads fold or arrive (a fold of 100,000 threads would otherwise
#: send a page per chunk).
REDRAW_EVERY = 0.25


class Runs(HoppingWidget):
    """The run list of a store (`Runs(store_or_url, machine)`): one row per thread, a page at a time.

    `threads` restricts it to those thread ids (a FleetReport's divergent threads, say); `prices` costs the
    tokens; `executor` folds on a process pool or a Dask cluster (as summarize_runs); `follow=True` keeps the list
    current as the store grows. `compare_with` is the machine (or machines) that recorded older threads: a
    selected thread recorded under another version opens with the one of that version as `compare_with`.
    `runs.filter(...)`, `runs.sort(...)` and `runs.select(...)` do what the controls do.
    """

    _esm = bundle.runs_esm()
    _css = bundle.css()

    page = traitlets.Dict().tag(sync=True)
    counts = traitlets.Dict().tag(sync=True)
    progress = traitlets.Dict().tag(sync=True)
    selection = traitlets.Dict().tag(sync=True)

    def __init__(
        self,
        store_or_url: EventLogStore | str,
        machine: Any,
        *,
        threads: Iterable[str] | None = None,
        prices: Mapping[str, Mapping[str, float]] | None = None,
        executor: Any = None,
        follow: bool = False,
        compare_with: Any = None,
        page_size: int = 50,
        **kwargs: Any,
    ) -> None:
        if isinstance(threads, str):
            raise AgentError("threads must be an iterable of thread ids, not one str", code="invalid-argument")
        if type(page_size) is not int or page_size < 1:
            raise AgentError(f"page_size must be a positive int, not {page_size!r}", code="invalid-argument")
        Prices(prices)  # a bad price list is refused before anything is read
        super().__init__(**kwargs)
        self.store = open_store(store_or_url) if isinstance(store_or_url, str) else store_or_url
        self._owns_store = isinstance(store_or_url, str)  # opened here from its URL: closed by close()
        self.machine = import_machine(machine) if isinstance(machine, str) else machine
        self.prices = prices
        self.executor = executor
        self.compare_with = compare_with
        self.page_size = page_size
        self.hop = KernelHop()  # the worker thread's writes reach the browser from the kernel's loop (hop.py)
        self._lock = self.hop.lock
        self._list = RunList(resolve_state=self._state_path)
        self._summaries = RunSummaries()  # every row folded so far (a thread folded again replaces its row)
        self._lengths: dict[str, int] = {}
        self._restricted = threads is not None
        self._ids = list(dict.fromkeys(threads)) if threads is not None else self._all_threads()
        self._offset = 0
        self._done = threading.Event()
        self._stopping = threading.Event()
        self._drawn_at = 0.0
        self._watching: tuple[asyncio.AbstractEventLoop, asyncio.Task[None]] | None = None
        self._explorer: Explorer | None = None
        self._selected: str | None = None
        self._slot = ipywidgets.VBox()
        self._box = ipywidgets.VBox([self, self._slot])
        self._progress: RunsProgress = {"done": 0, "total": len(self._ids), "folding": True, "following": False,
                                        "error": None}
        self.selection = {"threadId": None, "error": None}
        self.on_msg(self._on_message)
        # The first page folds here, so the list shows rows the moment the cell's output appears.
        first, rest = self._ids[:page_size], self._ids[page_size:]
        self._fold(first)
        self._redraw(force=True)
        self._worker = threading.Thread(target=self._background, args=(rest, follow), daemon=True,
                                        name="agent-explorer-runs")
        self._worker.start()

    # -- folding ---------------------------------------------------------------------------------------------

    def _all_threads(self) -> list[str]:
        lengths = self.store.sync.all_thread_lengths()
        self._lengths.update(lengths)
        return list(lengths)

    def _fold(self, ids: Sequence[str]) -> None:
        """Fold `ids` through summarize_runs (its cache makes a thread folded before cost no read); each batch
        lands in the list as it arrives. The list's own store object goes along, not its URL: a URL would open the
        store again for every fold (on PostgreSQL a probe, a pool and a catalog query, each time a followed thread
        grows); workers of an executor still reopen it from its URL."""
        if ids:
            summarize_runs(self.store, self.machine, threads=list(ids), executor=self.executor,
                           prices=self.prices, on_rows=self._arrived)

    def _arrived(self, rows: list[RunSummary]) -> None:
        if self._stopping.is_set():
            raise _Stopped
        frame = RunSummaries(rows).to_pandas()
        with self._lock:
            self._summaries.extend(rows)
            self._list.update(frame)
            self._lengths.update((row.thread_id, row.entries) for row in rows)
            self._progress["done"] = min(len(self._summaries), self._progress["total"])
        self._redraw()

    def _background(self, rest: list[str], follow: bool) -> None:
        try:
            self._fold(rest)
        except _Stopped:
            return
        except Exception as error:  # noqa: BLE001 - a thread has no caller: the widget shows what broke
            self._set_progress(error=f"{type(error).__name__}: {error}")
        finally:
            self._progress["folding"] = False
            self._redraw(force=True)  # before `done`: a caller that waited sees the whole list drawn
            self._done.set()
        if follow and not self._stopping.is_set():
            self._follow()

    def wait_summarized(self, timeout: float | None = None) -> bool:
        """Block until every thread is folded (True), or `timeout` seconds passed (False)."""
        return self._done.wait(timeout)

    @property
    def summaries(self) -> RunSummaries:
        """The summaries folded so far, as summarize_runs returns them (one row per thread, newest fold wins)."""
        with self._lock:
            return RunSummaries(self._summaries)

    # -- following the store ---------------------------------------------------------------------------------

    def _follow(self) -> None:
        """The worker thread, once folded: one watcher for the whole store; each batch of new or grown threads
        folds (on from its cached snapshot) and the list catches up. `stop()` cancels the watch."""
        self._set_progress(following=True)
        loop = asyncio.new_event_loop()
        try:
            task = loop.create_task(self._watch())
            self._watching = (loop, task)
            if self._stopping.is_set():  # a stop() that came before the task existed: it never starts
                task.cancel()
            loop.run_until_complete(task)
        except asyncio.CancelledError:
            pass
        except Exception as error:  # noqa: BLE001 - a thread has no caller: the widget shows what broke
            self._set_progress(error=f"following stopped: {type(error).__name__}: {error}")
        finally:
            self._watching = None
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
            self._set_progress(following=False)

    async def _watch(self) -> None:
        with self._lock:
            known = dict(self._lengths)
        watcher = watch_threads(self.store, known)
        try:
            async for batch in watcher:
                wanted = [info.thread_id for info in batch if not self._restricted or info.thread_id in self._wanted()]
                if not wanted:
                    continue
                with self._lock:
                    self._ids.extend(tid for tid in wanted if tid not in self._lengths)
                    self._progress["total"] = len(self._ids)
                await asyncio.to_thread(self._fold, wanted)
                self._redraw(force=True)
        finally:
            await watcher.aclose()

    def _wanted(self) -> set[str]:
        return set(self._ids)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop folding and following (the list keeps what it has)."""
        self._stopping.set()
        watching = self._watching
        if watching is not None:
            loop, task = watching
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(task.cancel)
        if self._worker.is_alive() and self._worker is not threading.current_thread():
            self._worker.join(timeout)

    @property
    def following(self) -> bool:
        return bool(self._progress.get("following"))

    # -- what the list shows ---------------------------------------------------------------------------------

    def filter(self, status: str | Collection[str] | None = None, state: str | None = None, text: str | None = None,
               verified: bool | None = None) -> Runs:
        """Show only the threads that meet every given criterion (None clears it); the sort stays in force.

        status: one status or several; state: the last state is, or is inside, this one ("working",
        "working.search" or "#id", as snapshot.matches); text: case-insensitive part of the thread id;
        verified: True or False."""
        chosen = make_filter(status, state, text, verified)
        with self._lock:
            self._list.set_filter(chosen)
            self._offset = 0
        self._redraw(force=True)
        return self

    def sort(self, column: str, descending: bool = False) -> Runs:
        """Order the list by a summary column (thread_id, entries, last_recorded, status, total_tokens, ...)."""
        with self._lock:
            self._list.set_sort(column, descending)
            self._offset = 0
        self._redraw(force=True)
        return self

    @property
    def shown(self) -> list[str]:
        """The thread ids the list shows now, in order, across all its pages."""
        with self._lock:
            return list(self._list.shown)

    def counts_by_status(self) -> dict[str, int]:
        with self._lock:
            return self._list.counts()

    def _state_path(self, state: str) -> str:
        """"#id" -> the state's dotted path on this machine (a state filter by id)."""
        found = _state_paths(self.machine.definition, []).get(state[1:])
        if found is None:
            raise AgentError(f"no state {state!r} in machine {getattr(self.machine, 'id', '?')!r}",
                             code="invalid-argument")
        return found

    def _redraw(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._drawn_at < REDRAW_EVERY:
            return
        self._drawn_at = now
        with self._lock:
            page = self._list.page(self._offset, self.page_size)
            self._offset = page["offset"]
            counts: RunsCounts = {"counts": self._list.counts(), "folded": len(self._list.rows),
                                  "threads": len(self._ids)}
            progress = dict(self._progress)
        with self.hold_sync():
            self.page = dict(page)
            self.counts = dict(counts)
            self.progress = progress

    def _set_progress(self, **changes: Any) -> None:
        with self._lock:
            self._progress.update(changes)  # type: ignore[typeddict-item]
            progress = dict(self._progress)
        self.progress = progress

    # -- the selected thread ---------------------------------------------------------------------------------

    def select(self, thread_id: str | None) -> Explorer | None:
        """Open `thread_id`'s Explorer under the list, as a click on its row does (None closes it)."""
        if thread_id is None:
            self._selected, self._explorer = None, None
            self._slot.children = ()
            self.selection = {"threadId": None, "error": None}
            return None
        if not isinstance(thread_id, str):
            raise AgentError(f"a thread id is a str, not {type(thread_id).__name__}", code="invalid-argument")
        options: dict[str, Any] = {"prices": self.prices}
        recorded = self._recorded_version(thread_id)
        if recorded is not None and recorded != str(getattr(self.machine, "version", recorded)):
            # Recorded under another version: open it anyway (its divergences are the point), beside the machine
            # that recorded it when the user gave one.
            options["check_version"] = False
            options["compare_with"] = self._recording_machine(recorded)
        explorer = Explorer.from_store(self.store, thread_id, self.machine, **options)
        # Triage opens a run where it matters: its first divergence (the row's, or the explorer's own check when the
        # row is still folding), else where it stands now (its last entry).
        divergent = self._divergent_index(thread_id)
        if divergent is None:
            divergent = (explorer.verification or {}).get("first")
        explorer.index = divergent if isinstance(divergent, int) else len(explorer) - 1
        self._selected, self._explorer = thread_id, explorer
        self._slot.children = (explorer,)
        self.selection = {"threadId": thread_id, "error": None}
        return explorer

    def _divergent_index(self, thread_id: str) -> int | None:
        with self._lock:
            row = self._summaries.get(thread_id)
        return row.divergent_index if row is not None else None

    def _recorded_version(self, thread_id: str) -> str | None:
        with self._lock:
            if thread_id in self._list.rows.index:
                version = self._list.rows.at[thread_id, "version"]
                return str(version) if isinstance(version, str) and version else None
        return None

    def _recording_machine(self, version: str) -> Any:
        given = self.compare_with
        candidates = given if isinstance(given, (list, tuple)) else [given] if given is not None else []
        for candidate in candidates:
            if str(getattr(candidate, "version", "")) == version:
                return candidate
        return None

    @property
    def selected(self) -> str | None:
        """The selected thread id, or None."""
        return self._selected

    @property
    def explorer(self) -> Explorer | None:
        """The selected thread's Explorer (same machine and prices), or None."""
        return self._explorer

    # -- the front end ---------------------------------------------------------------------------------------

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, Mapping):
            return
        kind = content.get("kind")
        try:
            if kind == "runs-page":
                offset = content.get("offset")
                if type(offset) is int:
                    with self._lock:
                        self._offset = max(0, offset)
                    self._redraw(force=True)
            elif kind == "runs-sort":
                column, descending = content.get("column"), content.get("descending")
                if isinstance(column, str) and isinstance(descending, bool):
                    self.sort(column, descending)
            elif kind == "runs-filter":
                status = [s for s in content.get("status") or () if isinstance(s, str)]
                verified = content.get("verified")
                self.filter(status=status or None, state=_str_or_none(content.get("state")),
                            text=_str_or_none(content.get("text")),
                            verified=verified if isinstance(verified, bool) else None)
            elif kind == "runs-select":
                thread_id = content.get("threadId")
                if isinstance(thread_id, str):
                    self.select(thread_id)
            if self.selection.get("error"):
                self.selection = {"threadId": self._selected, "error": None}  # the last problem is behind us
        except AgentError as error:
            # A bad criterion typed into the list (an unknown state id) or a thread that cannot be opened: said
            # in the widget, never a traceback in the log.
            self.selection = {"threadId": self._selected, "error": error.message}

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        # The list with the selected thread's Explorer under it: one output, the Explorer swapped in on select.
        return self._box._repr_mimebundle_(**kwargs)

    def __repr__(self) -> str:
        with self._lock:
            counts = {k: v for k, v in self._list.counts().items() if v}
            shown = len(self._list.shown)
        return f"Runs({plural(len(self._ids), 'thread')}, {shown} shown, {counts})"

    def close(self) -> None:
        """Stop folding and following, close the views, and the store when it was opened here from a URL."""
        if "_worker" not in self.__dict__ or self.__dict__.get("_closed"):
            # A constructor that refused its arguments, or closed already: ipywidgets closes again on __del__,
            # maybe at interpreter exit, where reopening the store's loop thread would hang.
            super().close()
            return
        self._closed = True
        self.stop()
        with contextlib.suppress(Exception):
            self._box.close()
            self._slot.close()
        super().close()
        if self._owns_store and not sys.is_finalizing():  # at exit the store's loop thread is gone already
            self.store.sync.close()


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _state_paths(node: Mapping[str, Any], path: list[str]) -> dict[str, str]:
    """Every state id of a definition -> its dotted path from the root ("support.awaitingApproval" ->
    "awaitingApproval"), the form a row's state line uses."""
    found = {str(node.get("id")): ".".join(path)}
    for key, child in (node.get("states") or {}).items():
        found.update(_state_paths(child, [*path, str(key)]))
    return found


class _Stopped(Exception):
    """Raised from a batch callback to end the background fold once the widget is stopped."""
