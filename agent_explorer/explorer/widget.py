"""`Explorer`: the anywidget time-travel debugger over a recorded run.

Python owns every piece of state (cursor, frame, table window, verification); the front end (js/, bundled to
static/widget.js) only draws traitlets and sends intents. Never runs machine actions, never writes to the
parent log (forks write to their own list or thread), never sends the whole log to the browser.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from ..errors import AgentError, AgentMachineVersionMismatchError
from ..eventlog import compare_machines, verify_log
from .aio import run_sync
from .branches import Branch, BranchComparison, Lineage, adopt_thread, validate_event
from .composer import composer_payload, dry_run
from .coverage import explorer_coverage
from .export import export_html
from .frames import ReplaySource, open_source
from .graph import build_graph
from .pending import Pending, PendingFrames
from .search import SearchHit, SearchQuery, explorer_search, on_search_message
from .table import EventTable
from .usage import UsageIndex, UsageLedger, explorer_usage
from .verification import VerificationSummary
from .wire import jsonable

__all__ = ["STATIC_DIR", "Explorer"]

STATIC_DIR = Path(__file__).parent / "static"
# Up to this many entries, verification runs before the widget is returned (the banner is right at once);
# above it, it runs on a worker thread and the banner says "verifying…" until the report lands.
SYNC_VERIFY_LIMIT = 20_000
BUILD_CHUNK = 2_000

_MISSING_BUNDLE = """
export default { render({ el }) {
  const p = document.createElement("pre");
  p.textContent = "agent_explorer: the widget's front end is not built (agent_explorer/explorer/static/widget.js).\\n" +
    "Reinstall the package (pip install -e .) or run `npm ci && npm run build` in js/.";
  el.appendChild(p);
} };
"""


def _esm() -> Path | str:
    bundle = STATIC_DIR / "widget.js"
    return bundle if bundle.exists() else _MISSING_BUNDLE


def _css() -> Path | str:
    css = STATIC_DIR / "widget.css"
    return css if css.exists() else ""


class Explorer(anywidget.AnyWidget):
    """A recorded run, opened: statechart, index slider, event table, state, divergence and usage panels.

    `Explorer(machine, entries)` or `Explorer.from_store(store, thread_id, machine)`; `explorer.index` is
    two-way (a cell can move the view, a slider move is visible as `explorer.snapshot` / `explorer.entry`,
    which are always current; inside a kernel the drawn `frame` follows on the next event-loop turn, so a
    burst of slider moves builds only the newest frame).

    Message protocol (JS -> Python, `model.send`): `{"kind": "table", offset, limit, type, text}` asks for a
    page of rows; `{"kind": "effects"}` derives the effects owed at the current index; `checkout`, `composer`,
    `compose-check` and `compose-send` drive the lineage and the composer; `search` / `search-page`, `coverage`
    and `usage-ledger` drive the analysis panels (js/README.md lists them all). Everything
    Python -> JS is a traitlet, so a re-rendered view (or a static export) shows the same state.
    """

    _esm = _esm()
    _css = _css()

    index = traitlets.Int(0).tag(sync=True)
    length = traitlets.Int(0).tag(sync=True)
    info = traitlets.Dict().tag(sync=True)
    graph = traitlets.Dict().tag(sync=True)
    frame = traitlets.Dict().tag(sync=True)
    table = traitlets.Dict().tag(sync=True)
    table_types: traitlets.List[list[Any]] = traitlets.List().tag(sync=True)
    verification = traitlets.Dict().tag(sync=True)
    comparison = traitlets.Dict().tag(sync=True)
    usage_series: traitlets.List[list[Any]] = traitlets.List().tag(sync=True)
    # {"forks": [...]} now; issue 9 adds search hits / coverage marks here.
    marks = traitlets.Dict().tag(sync=True)
    # issue 9 (coverage.py, search.py, usage.py): heatmap counts, one page of search hits, the usage ledger.
    coverage_data = traitlets.Dict().tag(sync=True)
    search_results = traitlets.Dict().tag(sync=True)
    usage_ledger = traitlets.Dict().tag(sync=True)
    # issue 9 (branches.py, composer.py): the lineage drawn beside the slider, the composer's choices at the index.
    lineage = traitlets.Dict().tag(sync=True)
    composer = traitlets.Dict().tag(sync=True)

    def __init__(
        self,
        machine: Any,
        entries: Sequence[Mapping[str, Any]],
        compare_with: Any = None,
        *,
        store: Any = None,
        thread_id: str | None = None,
        source: ReplaySource | None = None,
        verify: bool | str = "auto",  # True / "auto" / "background" / False
        page_size: int = 100,
        check_version: bool = True,
        **kwargs: Any,
    ) -> None:
        # No copy of a list (a 1M-entry log is opened as is); entries are only ever read.
        log: list[dict[str, Any]] = (
            entries if isinstance(entries, list) else [dict(e) for e in entries]
        )
        if not log:
            raise AgentError(
                "Explorer needs a log with at least its @agent.init entry; got an empty log",
                code="empty-log",
            )
        super().__init__(**kwargs)
        self.machine = machine
        self.compare_with = compare_with
        self.store = store
        self.thread_id = thread_id
        self._entries: list[dict[str, Any]] = log
        lazy = source is None and len(log) > SYNC_VERIFY_LIMIT
        self._check_version = check_version
        self._source: ReplaySource = (
            source
            if source is not None
            else self._open_timeline(machine, log, lazy, check_version)
        )
        # A long log opens before its one-pass indexes exist: usage sums and type counts are built by the
        # background thread (frames say `usage: None` until then), as are the Timeline's checkpoints.
        self._usage = UsageIndex([] if lazy else log)
        definition = machine.definition
        # The recording is the root of its lineage; `_line` is the line on view (the root, or a branch).
        self._root = self._line = Branch.of_run(
            machine, log, self._source, store=store, thread_id=thread_id, check_version=check_version
        )
        self._composer_open = False
        self._frames: PendingFrames = PendingFrames(
            self._source, log, definition, None if lazy else self._usage, machine, line=self._line
        )
        self._table = EventTable(log)
        self._page_size = page_size
        self._branches: list[Branch] = []
        self._wanted: int | None = None
        self._scheduled = False
        self._lock = threading.RLock()
        self._verifier: threading.Thread | None = None
        self._building = lazy  # the background fold has not reached the end yet
        self._summary = VerificationSummary(status="pending")  # the line on view's report (the chip's payload)
        self._progress_at = time.monotonic()
        self._deferred: int | None = (
            None  # an index asked for beyond the fold, answered when reached
        )

        self.length = len(log)
        self.info = {
            "machineId": str(getattr(machine, "id", definition.get("id"))),
            "machineVersion": str(getattr(machine, "version", "")),
            "threadId": thread_id,
            "compareWith": str(getattr(compare_with, "version", ""))
            if compare_with is not None
            else None,
        }
        self.graph = build_graph(
            definition, token="ae" + secrets.token_hex(3)
        ).to_json()
        self.table_types = [] if lazy else self._table.types()
        self.usage_series = self._usage.series()
        self.marks = {"forks": []}
        self.table = self._table.page(0, page_size)
        self.on_msg(self._on_message)
        self._start_background(verify, lazy)
        self._flush_frame()

    @staticmethod
    def _open_timeline(
        machine: Any, log: list[dict[str, Any]], lazy: bool, check_version: bool
    ) -> ReplaySource:
        try:
            return open_source(machine, log, lazy=lazy, check_version=check_version)
        except AgentMachineVersionMismatchError as error:
            raise AgentMachineVersionMismatchError(
                f"{error.message} To see where this machine parts from the recording, open the log "
                "anyway with Explorer(machine, entries, check_version=False) (divergences are then "
                "shown), or pass the recording machine and compare_with=this one."
            ) from error

    # -- construction from a store ------------------------------------------------------------------------

    @classmethod
    def from_store(
        cls, store: Any, thread_id: str, machine: Any, **kwargs: Any
    ) -> Explorer:
        """Read `thread_id` with `await store.read(thread_id)` and open it.

        Works inside a notebook's running event loop: the read runs on a worker thread with its own loop
        (see `explorer.aio.run_sync`). Forks of this explorer go through `store.fork`.
        """
        entries = run_sync(lambda: store.read(thread_id))
        if not entries:
            raise AgentError(
                f"thread {thread_id!r} is empty or does not exist in the store",
                code="thread-not-found",
            )
        return cls(machine, list(entries), store=store, thread_id=thread_id, **kwargs)

    # -- the cursor ------------------------------------------------------------------------------------------

    @traitlets.validate("index")
    def _clamp_index(self, proposal: Any) -> int:
        value = int(proposal["value"])
        return (
            max(0, min(value, max(0, len(self._entries) - 1)))
            if hasattr(self, "_entries")
            else value
        )

    @traitlets.observe("index")
    def _on_index(self, change: Any) -> None:
        if not hasattr(self, "_frames"):
            return
        self._wanted = change["new"]
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        from_browser = "index" in getattr(self, "_property_lock", {})
        if loop is None or not from_browser:
            # Set from Python (`ex.index = 42`): the frame is current when the statement returns, so a
            # cell that reads it, or a notebook saved with widget state right after, sees the new state.
            self._flush_frame()
        elif not self._scheduled:
            # From the browser, slider moves arrive as a burst of comm messages; building the frame on the
            # next loop turn answers only the newest of them (the ones in between were superseded).
            self._scheduled = True
            loop.call_soon(self._flush_frame)

    def _flush_frame(self) -> None:
        self._scheduled = False
        index = self.index if self._wanted is None else self._wanted
        self._wanted = None
        with self._lock:
            built = getattr(self._source, "built", None)
            if self._building and isinstance(built, int) and index >= built:
                # Past the background fold: answering now would block the kernel until the fold gets
                # there, so the view shows progress and the builder delivers the frame when it arrives.
                self._deferred = index
                self.frame = self._frames.pending(index, built)
            else:
                self._deferred = None
                self.frame = self._frames.build(index)
        self._follow_table(index)
        if self._composer_open:
            self._refresh_composer()

    def _deliver_deferred(self, final: bool = False) -> None:
        """Called by the background builder after each chunk: answer a deferred index once reachable."""
        with self._lock:
            index = self._deferred
            if index is None:
                return
            built = getattr(self._source, "built", 0)
            if final or index < built:
                self._deferred = None
                if index == self.index:
                    self.frame = self._frames.build(index)
            elif index == self.index:
                self.frame = self._frames.pending(index, built)

    def _follow_table(self, index: int) -> None:
        """Keep the current row inside the table window when the cursor moves (Python owns the window)."""
        query = self.table.get("query") or {}
        type_filter, text = query.get("type") or None, query.get("text") or None
        position = self._table.position_of(index, type_filter, text)
        if position is None:
            return
        offset, limit = (
            int(self.table.get("offset", 0)),
            int(self.table.get("limit", self._page_size)),
        )
        rows = self.table.get("rows") or []
        if (
            offset <= position < offset + len(rows)
            and len(self.table.get("rows", [])) > 0
        ):
            return
        start = (position // limit) * limit
        self.table = self._table.page(start, limit, type_filter, text)

    @property
    def snapshot(self) -> Any:
        """The snapshot after entry `index` (from the checkpointed timeline; never a refold from 0)."""
        return self._source.state_at(self.index)

    @property
    def entry(self) -> dict[str, Any]:
        """The log entry at `index`, as recorded."""
        return self._entries[self.index]

    @property
    def entries(self) -> list[dict[str, Any]]:
        return self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        # ipywidgets' default repr lists every trait (the DOT source, the frame...): far too much for a REPL.
        info = self.info or {}
        status = (self.verification or {}).get("status")
        return (
            f"Explorer(machine={info.get('machineId')!r} v{info.get('machineVersion')}, "
            f"entries={len(self._entries)}, index={self.index}, verification={status!r})"
        )

    # -- messages from the front end --------------------------------------------------------------------

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, Mapping):
            return
        if content.get("kind") in ("checkout", "composer", "compose-check", "compose-send"):
            self._on_branch_message(content)
        elif content.get("kind") == "effects":
            frame = dict(self.frame)
            if frame.get("index") == self.index:
                frame.update(self._frames.owed(self.index, force=True))  # effects, timers and children in flight
                self.frame = frame
        elif content.get("kind") == "table":
            type_filter = str(content.get("type") or "") or None
            text = str(content.get("text") or "") or None
            self.table = self._table.page(
                int(content.get("offset") or 0),
                int(content.get("limit") or self._page_size),
                type_filter,
                text,
            )
            self._mark_hits(self._table.matches(type_filter, text))
        elif content.get("kind") in ("search", "search-page"):
            on_search_message(self, content)
        elif content.get("kind") == "coverage":
            explorer_coverage(self)
        elif content.get("kind") == "usage-ledger":
            explorer_usage(self, compare=self._branches or None)

    def _mark_hits(self, hits: list[int] | None, cap: int = 2_000) -> None:
        """Filter / search hits as marks on the slider track (none when nothing is filtered)."""
        marked = [] if hits is None else hits[:cap]
        if marked != self.marks.get("hits", []) or self.marks.get("hitRanges"):
            self.marks = {**self.marks, "hits": marked, "hitRanges": []}

    # -- verification and the machine comparison ---------------------------------------------------------

    def _start_background(self, verify: bool | str, lazy: bool) -> None:
        """Verification (and, for a lazily opened long log, the checkpoint fold) off the caller's thread.

        Short logs are verified before the constructor returns, so the banner is right at first draw; long
        ones open at once and the chip says "verifying…" until the report lands (`wait_verified()` blocks).
        """
        check = self._check = verify is not False
        status = "pending" if check else "off"
        self._set_verification(VerificationSummary(status=status), None)
        small = len(self._entries) <= SYNC_VERIFY_LIMIT
        sync_verify = verify is True or (verify in ("auto", False) and small)
        if sync_verify and (check or self.compare_with is not None):
            self._verify(check)
        later = not sync_verify and (check or self.compare_with is not None)
        if lazy or later:
            self._verifier = threading.Thread(
                target=self._background,
                args=(later, lazy),
                name="agent-explorer-verify",
                daemon=True,
            )
            self._verifier.start()

    def _background(self, verify: bool, lazy: bool) -> None:
        """The worker thread's whole job; nothing may escape it (the view reports what failed)."""
        try:
            if lazy:
                self._index_in_background()
                self._build_in_background()
            if verify:
                self._verify(self._check)
        except Exception as error:  # noqa: BLE001 - a thread has no caller to raise to
            self._build_error = error
            with self._lock:
                self._building = False
                self.verification = {
                    **self.verification,
                    "status": "error",
                    "message": f"{type(error).__name__}: {error}",
                }

    def _build_in_background(self) -> None:
        build = getattr(self._source, "build", None)
        try:
            if callable(build):
                # In chunks: the Timeline holds its lock per build call, and scrubbing must not wait long.
                for until in range(
                    BUILD_CHUNK, len(self._entries) + BUILD_CHUNK, BUILD_CHUNK
                ):
                    build(min(until, len(self._entries) - 1))
                    self._root.pending_index.build(min(until, len(self._root.entries) - 1))
                    self._deliver_deferred()
        finally:
            with self._lock:
                self._building = False
            self._deliver_deferred(final=True)

    def _index_in_background(self) -> None:
        """The one-pass indexes a long log opens without: usage prefix sums and event type counts."""
        usage = UsageIndex(self._entries)
        types = self._table.types()
        with self._lock:
            self._usage = self._frames.usage = usage
            self.usage_series = usage.series()
            self.table_types = types
            if (
                self._deferred is None
                and self.frame.get("index") == self.index
                and "usage" in self.frame
            ):
                self.frame = {**self.frame, "usage": usage.totals_at(self.index)}

    def _verify(self, check: bool = True) -> None:
        """`verify_log` (when `check`) and, with `compare_with`, `compare_machines`; then publish both."""
        try:
            summary = (
                VerificationSummary.from_report(
                    verify_log(
                        self.machine,
                        self._entries,
                        check_version=self._check_version,
                        progress=self._progress,
                    )
                )
                if check
                else VerificationSummary(status="off")
            )
        except Exception as error:  # noqa: BLE001 - shown in the panel; the explorer stays usable
            summary = VerificationSummary(
                status="error", message=f"{type(error).__name__}: {error}"
            )
        comparison = None
        if self.compare_with is not None:
            try:
                result = compare_machines(
                    self.machine, self.compare_with, self._entries
                )
                comparison = {
                    "index": result.index,
                    "diff": jsonable([c.to_dict() for c in (result.diff or [])][:200]),
                }
            except Exception as error:  # noqa: BLE001
                comparison = {
                    "index": None,
                    "diff": [],
                    "error": f"{type(error).__name__}: {error}",
                }
        self._set_verification(summary, comparison)

    def _progress(self, done: int) -> None:
        """verify_log's per-entry callback; publishes at most every 0.5 s (the chip shows a percentage)."""
        now = time.monotonic()
        if now - self._progress_at < 0.5:
            return
        self._progress_at = now
        with self._lock:
            if self.verification.get("status") == "pending":
                self.verification = {
                    **self.verification,
                    "progress": done / max(1, len(self._entries)),
                }

    def _set_verification(
        self, summary: VerificationSummary, comparison: dict[str, Any] | None
    ) -> None:
        with self._lock:
            self._summary = summary
            self._table.divergent = summary.divergent
            payload = summary.to_json()
            payload["machines"] = comparison
            self.verification = payload
            if summary.status == "diverged" and self.table.get("rows"):
                query = self.table.get("query") or {}
                self.table = self._table.page(
                    int(self.table.get("offset", 0)),
                    int(self.table.get("limit", self._page_size)),
                    query.get("type") or None,
                    query.get("text") or None,
                )

    def wait_verified(self, timeout: float | None = None) -> dict[str, Any]:
        """Block until a background verification finished; returns the `verification` payload."""
        if self._verifier is not None:
            self._verifier.join(timeout)
        return dict(self.verification)

    @property
    def first_divergence(self) -> int | None:
        return self._summary.first

    # -- branches ------------------------------------------------------------------------------------------

    def fork(
        self, at: int | None = None, *, new_thread_id: str | None = None
    ) -> Branch:
        """A branch of the line on view holding its `[0, at)` (default: up to and including the current index).

        On a store-backed line the fork is `store.fork` onto a new thread; otherwise a copy of the entry list.
        Either way the branch shares the line's checkpoints (nothing refolds) and records its parent.
        """
        at = self.index + 1 if at is None else at
        branch = self._line.fork(at, new_thread_id=new_thread_id)
        self._branches.append(branch)
        self._draw_lineage()
        return branch

    def compare(self, branch: Branch) -> BranchComparison:
        """First index where the line on view and `branch` differ, the events each has there and the state
        diff; shown in the widget."""
        result = self._line.diff(branch)
        payload = result.to_json()
        payload["diff"] = jsonable(payload["diff"][:200])
        payload["eventA"], payload["eventB"] = jsonable(payload["eventA"]), jsonable(payload["eventB"])
        payload["lineName"] = self._line.name
        payload["branch"] = {
            "threadId": branch.thread_id,
            "name": branch.name,
            "appended": [
                {
                    "index": r.index,
                    "type": r.entry.get("event", {}).get("type"),
                    "ignored": r.ignored,
                }
                for r in branch.appended[-50:]
            ],
        }
        self.comparison = payload
        return result

    def branches(self) -> Lineage:
        """The branches forked from this explorer, in the order they were made (a list), with their tree:
        `.root`, `.to_pandas()`; drawn beside the slider."""
        self._draw_lineage()
        return Lineage(self._root, self._branches, self._line)

    # -- lines, the composer and pending work (branches.py, composer.py, pending.py) ---------------------

    @property
    def line(self) -> Branch:
        """The line on view: the recording (`explorer.branches().root`) or a branch checked out."""
        return self._line

    def checkout(self, branch: Branch | None = None, *, index: int | None = None) -> Branch:
        """View `branch` (None: the recording) in this widget, at `index` (default: its last entry).

        Every panel follows the line: chart, slider, table, usage, verification. The lines themselves are
        untouched; forks and the composer then work on the line on view.
        """
        line = self._root if branch is None else branch
        if line is not self._root and line not in self._root.descendants():
            raise AgentError(f"{line!r} is not a branch of this explorer", code="invalid-argument")
        with self._lock:
            if self._line is self._root and line is not self._root:
                # Keep the recording's report: coming back must not re-verify a long log on the caller's thread.
                self._root_verification = (self._summary, self.verification.get("machines"))
            self._line = line
            self._entries, self._source = line.entries, line.source
            self._usage = UsageIndex(line.entries)
            self._frames = PendingFrames(
                line.source, line.entries, self.machine.definition, self._usage, self.machine, line=line
            )
            self._table = EventTable(line.entries)
            self._building = False
            self._deferred = None
            self.length = len(line.entries)
            self.info = {**self.info, "threadId": line.thread_id or self._root.thread_id, "line": line.name}
            self.table_types = self._table.types()
            self.usage_series = self._usage.series()
            self.table = self._table.page(0, self._page_size)
            self.comparison = {}
            self.marks = {**self.marks, "hits": [], "hitRanges": []}  # hits were indices of the line left
            self.search_results = {}  # so were the search's
            self.search_hits: list[SearchHit] = []
            saved = getattr(self, "_root_verification", None)
            if line is self._root and saved is not None:
                self._set_verification(*saved)
            elif len(line.entries) <= SYNC_VERIFY_LIMIT:
                self._verify(self._check)
            else:
                self._set_verification(VerificationSummary(status="off"), None)
        self._draw_lineage()
        target = len(line.entries) - 1 if index is None else index
        if self.index == target:
            self._flush_frame()
        else:
            self.index = target
        return line

    def compose(self, event: Mapping[str, Any], *, at: int | None = None) -> Any:
        """Send `event` at index `at` (default: the cursor) of the line on view, as the composer does.

        At a branch's last index it is appended there; anywhere else the line is forked after `at` first.
        The view then moves to the branch, on the new entry. Returns the `AppendResult`.
        """
        at = self.index if at is None else at
        line = self._line
        # Refused events must not leave an empty fork behind: validate against the state at `at` first.
        validate_event(self.machine, line.source.state_at(at), event, line.pending_index.at(at))
        if line is self._root or at != len(line.entries) - 1:
            line = self.fork(at + 1)
        result = line.append(event)
        self.checkout(line)
        return result

    def add_thread(self, thread_id: str) -> Branch:
        """Open another thread of this explorer's store as a branch: one forked with `store.fork` (by this
        explorer or anyone) shares its first entries verbatim, which places it in the lineage."""
        if self.store is None:
            raise AgentError("add_thread needs an explorer opened with Explorer.from_store", code="invalid-argument")
        entries = list(run_sync(lambda: self.store.read(thread_id)))
        branch = adopt_thread(self._root, thread_id, entries) if entries else None
        if branch is None:
            raise AgentError(
                f"thread {thread_id!r} shares no entry with {self._root.thread_id!r}: it is not a fork of this run",
                code="invalid-fork",
            )
        self._draw_lineage()
        return branch

    def find_forks(self, *, limit: int = 1_000) -> list[Branch]:
        """Every thread of the store (the first `limit`) that starts with this run's init entry, as a branch."""
        if self.store is None:
            raise AgentError("find_forks needs an explorer opened with Explorer.from_store", code="invalid-argument")
        first = self._root.entries[0].get("id")
        found = []
        for info in run_sync(lambda: self.store.list_threads(limit=limit)):
            thread = getattr(info, "thread_id", info)
            if thread == self._root.thread_id or any(b.thread_id == thread for b in self._root.descendants()):
                continue
            head = run_sync(partial(self.store.read, thread, 0, 1))
            if head and head[0].get("id") == first:
                found.append(self.add_thread(thread))
        return found

    def pending(self, at: int | None = None) -> Pending:
        """After entry `at` (default: the cursor) of the line on view: `after` timers armed, children in
        flight with their request ids, and what `steps.replay` says is owed (`.to_pandas()`)."""
        return self._line.pending_index.at(self.index if at is None else at)

    def _draw_lineage(self) -> None:
        # Forks made on a branch object (`branch.fork()`) belong to the tree too; the list is updated in place.
        self._branches[:] = self._root.descendants()
        self.lineage = Lineage(self._root, self._branches, self._line).to_json() if self._branches else {}
        forks = sorted({b.forked_at - 1 for b in self._branches if b.parent is self._line})
        self.marks = {**self.marks, "forks": forks}

    def _refresh_composer(self) -> None:
        index = self.index
        line = self._line
        try:
            snapshot = line.source.state_at(index)
            pending = line.pending_index.at(index)
            self.composer = composer_payload(
                self.machine, snapshot, pending, index=index, line=line.name,
                last=line is not self._root and index == len(line.entries) - 1,
            )
        except Exception as error:  # noqa: BLE001 - the panel says what broke; the explorer stays usable
            self.composer = {"index": index, "error": f"{type(error).__name__}: {error}", "choices": []}

    def _on_branch_message(self, content: Mapping[str, Any]) -> None:
        """Intents of branches.js / composer.js: check out a line, open the composer, dry-run or send an event."""
        kind = content.get("kind")
        if kind == "checkout":
            name = content.get("branch")
            found = next((b for b in [self._root, *self._root.descendants()] if b.name == name), None)
            if found is not None:
                self.checkout(found)
        elif kind == "composer":
            self._composer_open = bool(content.get("open", True))
            if self._composer_open:
                self._refresh_composer()
        elif kind in ("compose-check", "compose-send"):
            event = content.get("event")
            index = self.index
            if kind == "compose-check":
                snapshot = self._line.source.state_at(index)
                check = dry_run(self.machine, snapshot, self._line.pending_index.at(index), event)
                self.composer = {**self.composer, "check": {**check, "nonce": content.get("nonce")}}
                return
            try:
                result = self.compose(event if isinstance(event, Mapping) else {})
            except AgentError as error:
                self.composer = {**self.composer, "check": {"ok": False, "error": error.message,
                                                            "fields": list(getattr(error, "fields", None) or []),
                                                            "nonce": content.get("nonce")}}
                return
            self.composer = {**self.composer, "sent": {"index": result.index, "ignored": result.ignored,
                                                       "message": result.message, "line": self._line.name,
                                                       "nonce": content.get("nonce")}}

    def search(
        self,
        text: str,
        *,
        type: str | None = None,
        regex: bool = False,
        path: str | None = None,
        scope: str = "both",
        case: bool = False,
        limit: int | None = None,
        mark: int = 2_000,
    ) -> list[SearchHit]:
        """Hits of `text` (substring, or `regex=True`) in every event and every context, under a JSON `path`.

        Each hit is its index (an int) with `.where` ("event" | "context"), `.path`, `.text`, `.until`;
        see search.py. Hits are marked on the slider track and paged to the widget's search panel; a plain
        text query also filters the table.
        """
        hits = explorer_search(self, SearchQuery(text, regex, path, scope, case, type), limit=limit, mark=mark)
        plain = not regex and not path
        self.table = self._table.page(0, self._page_size, type, text if plain else None)
        return hits

    def coverage(self, logs: Any = None, *, store: Any = None, thread_ids: Sequence[str] | None = None) -> Any:
        """States entered / transitions taken (this log and its branches, `logs`, or a store's threads) as a
        DataFrame; the widget's "coverage" toggle draws it as a heatmap on the chart."""
        return explorer_coverage(self, logs, store=store, thread_ids=thread_ids).to_pandas()

    def to_html(self, path: str | Path, start: int | None = None, stop: int | None = None) -> Path:
        """One self-contained HTML file of this explorer (chart, log window, state at each index); see export.py."""
        return export_html(self, path, start, stop)

    def effects(self, at: int | None = None) -> list[dict[str, Any]] | None:
        """Effects owed after entry `at` (default: the current index); derived, never executed."""
        owed: list[dict[str, Any]] = self.pending(at).to_json()["owed"]
        return owed

    def usage(self, at: int | None = None, *, compare: Any = None) -> UsageLedger:
        """The usage ledger up to `at` (default: the whole run): reads as the cumulative totals (same keys as
        get_usage_from_events), `.to_pandas()` / `.by_model()` / `.by_state()` / `.compare()` as tables;
        `compare=` branches are drawn beside this run in the usage panel."""
        return explorer_usage(self, at, compare)
