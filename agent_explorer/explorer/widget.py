"""`Explorer`: the anywidget time-travel debugger over a recorded run.

The widget only wires its panels (explorer/panels/) to one session (explorer/session.py, the mediator that owns
the lock, the line on view, the cursor, the events and the threads): it declares the traitlets of the wire
protocol (explorer/protocol.py), gives each panel write access to the ones it owns, routes each message kind to
the panel that answers it, and keeps the public methods a notebook calls. Python owns every piece of state; the
front end (js/, bundled to static/widget.js) only draws traitlets and sends intents. Never runs machine
actions, never writes to the log or the store it explores (forks live in memory until `branch.save()`), never
sends the whole log to the browser.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, overload

import anywidget
import traitlets

from ..errors import AgentError, AgentMachineVersionMismatchError
from ..eventlog.dataframe import log_to_pandas
from ..eventlog.entries import recorded_state_hash
from ..eventlog.timeline import Timeline
from ..runs.store import store_usage
from . import bundle
from .branches import AppendResult, Branch, BranchComparison, Lineage, open_line
from .coverage import Coverage
from .export import export_html
from .hop import KernelHop
from .panels.base import Panel, Router, Traits
from .panels.chart import ChartPanel
from .panels.composer import ComposerPanel
from .panels.coverage import CoveragePanel
from .panels.cursor import CursorPanel
from .panels.lineage import LineagePanel
from .panels.live import LivePanel
from .panels.search import SearchPanel
from .panels.table import TablePanel
from .panels.track import TrackPanel
from .panels.usage import UsagePanel
from .panels.verification import VerificationPanel
from .pending import Pending, effect_json
from .prices import Prices
from .search import SearchHits, SearchQuery
from .session import Session
from .usage import StoreUsage, UsageIndex, UsageLedger

__all__ = ["SYNC_VERIFY_LIMIT", "Explorer", "HoppingWidget"]

# Up to this many entries the line is folded (and verified) before the widget is returned, so the banner is
# right at once; above it the widget opens at once and the one fold runs on a worker thread (in the chunks of
# eventlog/timeline.py's BUILD_CHUNK).
SYNC_VERIFY_LIMIT = 20_000


P = TypeVar("P", bound=Panel)


class HoppingWidget(anywidget.AnyWidget):
    """An anywidget whose state updates leave through one `KernelHop` (`self.hop`, set by the subclass): written
    from any thread, sent from the kernel's loop (hop.py). The browser's own updates are applied under its lock."""

    hop: KernelHop | None = None

    def send_state(self, key: Any = None) -> None:
        hop = self.hop
        if hop is None:  # still in ipywidgets' constructor
            super().send_state(key)
            return
        keys = list(self.keys) if key is None else [key] if isinstance(key, str) else list(key)
        hop.send(keys, super().send_state)

    def set_state(self, sync_data: Any) -> None:
        if self.hop is None:
            super().set_state(sync_data)
            return
        with self.hop.lock:
            super().set_state(sync_data)

    def _handle_msg(self, msg: Any) -> None:
        if self.hop is not None:
            self.hop.adopt()  # the kernel answers this widget on this thread (a subshell's, with ipykernel 7)
        super()._handle_msg(msg)


class Explorer(HoppingWidget):
    """A recorded run, opened: statechart, index slider, event table, state, divergence and usage panels.

    `Explorer(machine, entries)` or `Explorer.from_store(store, thread_id, machine)`; `explorer.index` is
    two-way (a cell can move the view, a slider move is visible as `explorer.snapshot` / `explorer.entry`,
    which are always current; inside a kernel the drawn `frame` follows on the next event-loop turn, so a
    burst of slider moves builds only the newest frame). The line is folded once: its checkpoints carry the
    snapshot, the effects owed and the hash check, and every panel reads that one fold. `verify` says when that
    fold runs: True before the widget is returned, whatever the length; "background" on a worker thread (the
    widget opens at once, "verifying… n%"); "auto" (the default) before returning up to `SYNC_VERIFY_LIMIT`
    entries and in the background above; False as "auto", checking no hash.

    `compare_with` is the machine that recorded the log (when today's differs): divergent indices then show
    the recording's states beside the replay's. `prices={model: {"input": usd, "output": usd}}` (USD per
    million tokens) costs the usage per model and per state in the panel, the ledger and `usage()`.
    """

    _esm = bundle.esm()
    _css = bundle.css()

    # The wire protocol (explorer/protocol.py types every value); each traitlet has exactly one owning panel.
    index = traitlets.Int(0).tag(sync=True)
    length = traitlets.Int(0).tag(sync=True)
    frame = traitlets.Dict().tag(sync=True)
    info = traitlets.Dict().tag(sync=True)
    graph = traitlets.Dict().tag(sync=True)
    table = traitlets.Dict().tag(sync=True)
    table_types: traitlets.List[list[Any]] = traitlets.List().tag(sync=True)
    verification = traitlets.Dict().tag(sync=True)
    comparison = traitlets.Dict().tag(sync=True)
    usage_series: traitlets.List[list[Any]] = traitlets.List().tag(sync=True)
    usage_ledger = traitlets.Dict().tag(sync=True)
    coverage_data = traitlets.Dict().tag(sync=True)
    search_results = traitlets.Dict().tag(sync=True)
    lineage = traitlets.Dict().tag(sync=True)
    composer = traitlets.Dict().tag(sync=True)
    live = traitlets.Dict().tag(sync=True)
    state_track = traitlets.Dict().tag(sync=True)

    # Each panel is built from the session and its own traits only; the order here is no dependency (the session
    # delivers its events run-to-completion, and tests/explorer/test_session.py builds them in reverse).
    PANELS: tuple[type[Panel], ...] = (ChartPanel, LineagePanel, CursorPanel, TablePanel, VerificationPanel,
                                       SearchPanel, UsagePanel, CoveragePanel, ComposerPanel, LivePanel, TrackPanel)

    def __init__(self, machine: Any, entries: Sequence[Mapping[str, Any]], compare_with: Any = None, *,
                 store: Any = None, thread_id: str | None = None,
                 verify: bool | str = "auto",  # True (before returning) / "auto" (by length) / "background" / False
                 page_size: int = 100, check_version: bool = True,
                 prices: Mapping[str, Mapping[str, float]] | None = None, follow: bool = False, **kwargs: Any) -> None:
        priced = _checked(entries, verify, prices)
        super().__init__(**kwargs)
        self.machine, self.compare_with, self.store, self.thread_id = machine, compare_with, store, thread_id
        # True folds (and verifies) before returning whatever the length; "auto" does so up to SYNC_VERIFY_LIMIT.
        lazy = verify == "background" or (verify is not True and len(entries) > SYNC_VERIFY_LIMIT)
        timeline = _open(machine, entries, lazy=lazy, check_version=check_version, verify=verify is not False)
        root = Branch.of_run(machine, timeline, store=store, thread_id=thread_id)
        self.hop = KernelHop()
        # A long log opens before its one-pass indexes exist: the usage sums and type counts are built by the
        # session's background thread (frames say `usage: None` until then), as is the line's fold.
        session = self._session = Session(
            self, machine, root, hop=self.hop, usage=None if lazy else UsageIndex(root.entries), page_size=page_size,
            prices=priced, store=store, thread_id=thread_id, compare_with=compare_with, lazy=lazy)
        self._panels = [kind(session, Traits(session, kind.TRAITS)) for kind in self.PANELS]
        self._on_message = Router(self._panels, lambda reply: self.send(reply))  # each kind to its one panel
        self._handlers = self._on_message.handlers
        self._lineage, self._verification = self._panel(LineagePanel), self._panel(VerificationPanel)
        self._table, self._search = self._panel(TablePanel), self._panel(SearchPanel)
        self._usage = self._panel(UsagePanel)
        self.on_msg(self._on_message)
        session.start(at=len(root.entries) - 1 if follow else 0)  # a live run opens at its tail, to ride it
        if follow:
            self.follow()

    def _panel(self, kind: type[P]) -> P:
        return next(panel for panel in self._panels if isinstance(panel, kind))

    # -- a live run -------------------------------------------------------------------------------------------

    def follow(self, on: bool = True) -> None:
        """Follow the thread as its host appends to it (`follow(False)` stops; following again catches up on
        what arrived meanwhile). New entries extend the recording's one fold; at the tail the cursor stays at the
        tail, anywhere else it stays where it is and the widget offers a jump to the new entries."""
        self._session.follower.follow(on)

    @property
    def following(self) -> bool:
        return self._session.follower.following

    # -- construction from a store ------------------------------------------------------------------------

    @classmethod
    def from_store(cls, store: Any, thread_id: str, machine: Any, **kwargs: Any) -> Explorer:
        """Read `thread_id` from `store` and open it (works inside a notebook's running event loop: the read
        runs on the store's own loop thread, `store.sync`). Forks of this explorer stay in memory until
        `branch.save()` writes one to the store. `follow=True` opens at the last entry and follows the thread
        as its host appends to it (the cursor rides the tail until it is moved)."""
        entries = store.sync.read(thread_id)
        if not entries:
            raise AgentError(f"thread {thread_id!r} is empty or does not exist in the store", code="thread-not-found")
        return cls(machine, list(entries), store=store, thread_id=thread_id, **kwargs)

    # -- the cursor ------------------------------------------------------------------------------------------

    @traitlets.validate("index")
    def _clamp_index(self, proposal: Any) -> int:
        value = int(proposal["value"])
        return self._session.clamp(value) if hasattr(self, "_session") else value

    @property
    def snapshot(self) -> Any:
        """The snapshot after entry `index` (from the checkpointed timeline; never a refold from 0)."""
        return self._session.line.timeline.state_at(self.index)

    @property
    def entry(self) -> Mapping[str, Any]:
        """The log entry at `index`, as recorded."""
        return self._session.entries[self.index]

    @property
    def entries(self) -> list[Mapping[str, Any]]:
        """The entries of the line on view (the recording, or the branch checked out)."""
        return self._session.entries

    def __len__(self) -> int:
        return len(self._session.entries)

    def __repr__(self) -> str:
        # ipywidgets' default repr lists every trait (the DOT source, the frame...): far too much for a REPL.
        info = self.info or {}
        status = (self.verification or {}).get("status")
        return (
            f"Explorer(machine={info.get('machineId')!r} v{info.get('machineVersion')}, "
            f"entries={len(self)}, index={self.index}, line={self._session.line.name!r}, verification={status!r})"
        )

    # -- verification -----------------------------------------------------------------------------------------

    def wait_verified(self, timeout: float | None = None) -> dict[str, Any]:
        """Block until a background fold finished; returns the `verification` payload."""
        self._session.wait_folded(timeout)
        return dict(self.verification)

    @property
    def first_divergence(self) -> int | None:
        return self._verification.summary.first

    # -- the chart -----------------------------------------------------------------------------------------------

    def collapse(self, *states: str) -> None:
        """Draw these compound or parallel states as one box each, naming the active state inside: a chart too
        large to read whole reads in parts. A state is named by its id (`"#watch.main.displays"` or without
        the `#`) or its path of keys (`"main.displays"`). Clicking a state's title in the chart does the same."""
        self._panel(ChartPanel).collapse(states)

    def expand(self, *states: str) -> None:
        """Draw these collapsed states whole again; with no argument, every collapsed state."""
        self._panel(ChartPanel).expand(states or None)

    @property
    def collapsed(self) -> list[str]:
        """The ids of the states drawn collapsed."""
        return self._panel(ChartPanel).collapsed

    # -- lines: branches, the composer, pending work ----------------------------------------------------------

    @property
    def line(self) -> Branch:
        """The line on view: the recording (`explorer.branches().root`) or a branch checked out."""
        return self._session.line

    def fork(self, at: int | None = None, *, name: str | None = None) -> Branch:
        """A branch of the line on view holding its `[0, at)` (default: up to and including the current index).

        In memory, even on a store-backed explorer (`branch.save()` writes it); it shares the line's
        checkpoints (nothing refolds) and records its parent. `name` names it (default `fork-<n>`).
        """
        return self._lineage.fork(self.index + 1 if at is None else at, name=name)

    def compare(self, branch: Branch) -> BranchComparison:
        """First index where the line on view and `branch` differ, the events each has there and the state
        diff; shown in the widget."""
        return self._lineage.compare(branch)

    def branches(self) -> Lineage:
        """The branches forked from this explorer, in the order they were made (a list), with their tree:
        `.root`, `.to_pandas()`; drawn beside the slider."""
        return self._lineage.lineage()

    def checkout(self, branch: Branch | None = None, *, index: int | None = None) -> Branch:
        """View `branch` (None: the recording) in this widget, at `index` (default: its last entry).

        Every panel follows the line: chart, slider, table, usage, verification. The line already on view is not
        switched: its views catch up with what was appended and keep their page, search hits and comparison. The
        lines themselves are untouched; forks and the composer then work on the line on view.
        """
        return self._lineage.checkout(branch, index)

    def compose(self, event: Mapping[str, Any], *, at: int | None = None) -> AppendResult:
        """Send `event` at index `at` (default: the cursor) of the line on view, as the composer does.

        At a branch's last index it is appended there; anywhere else the line is forked after `at` first.
        The view then moves to the branch, on the new entry. Returns the `AppendResult`.
        """
        return self._panel(ComposerPanel).compose(event, at)

    def add_thread(self, thread_id: str) -> Branch:
        """Open another thread of this explorer's store as a branch: one forked with `store.fork` (or saved
        with `branch.save`) shares its first entries verbatim, which places it in the lineage."""
        return self._lineage.add_thread(thread_id)

    def find_forks(self, *, limit: int = 1_000) -> list[Branch]:
        """Every thread of the store (the first `limit`) that starts with this run's init entry, as a branch."""
        return self._lineage.find_forks(limit)

    def pending(self, at: int | None = None) -> Pending:
        """After entry `at` (default: the cursor) of the line on view: `after` timers armed, children in
        flight with their request ids, and what `steps.replay` says is owed (`.to_pandas()`)."""
        return self._session.line.pending(self.index if at is None else at)

    def effects(self, at: int | None = None) -> list[dict[str, Any]]:
        """Effects owed after entry `at` (default: the current index); derived, never executed."""
        return [effect_json(e) for e in self.pending(at).owed]

    # -- analysis ---------------------------------------------------------------------------------------------

    def search(self, text: str, *, type: str | None = None, regex: bool = False, path: str | None = None,
               scope: str = "both", case: bool = False, limit: int | None = None, mark: int = 2_000) -> SearchHits:
        """Hits of `text` (substring, or `regex=True`) in every event and every context, under a JSON `path`.

        Each hit is its index (an int) with `.where` ("event" | "context"), `.path`, `.text`, `.until`;
        see search.py. Hits are marked on the slider track and paged to the widget's search panel; a plain
        text query also filters the table.
        """
        hits = self._search.search(SearchQuery(text, regex, path, scope, case, type), limit=limit, mark=mark)
        self._table.filter(type, text if not regex and not path else None)
        return hits

    @property
    def search_hits(self) -> SearchHits:
        """The hits of the last search (from a cell or the widget's panel)."""
        return self._search.hits

    def coverage(self, logs: Any = None, *, store: Any = None, thread_ids: Sequence[str] | None = None,
                 executor: Any = None) -> Any:
        """States entered / transitions taken (this log and its branches, `logs`, or a store's threads) as a
        DataFrame; the widget's "coverage" toggle draws it as a heatmap on the chart. A store's threads are
        folded on `executor` when given (a process pool, Dask's `Client.get_executor()`; see agent_explorer.fleet)."""
        return self.coverage_counts(logs, store=store, thread_ids=thread_ids, executor=executor).to_pandas()

    def coverage_counts(self, logs: Any = None, *, store: Any = None,
                        thread_ids: Sequence[str] | None = None, executor: Any = None) -> Coverage:
        """What `coverage()` draws, as counts (no pandas)."""
        return self._panel(CoveragePanel).coverage(logs, store=store, thread_ids=thread_ids, executor=executor)

    @overload
    def usage(self, at: int | None = None, *, compare: Any = None) -> UsageLedger: ...
    @overload
    def usage(self, at: int | None = None, *, compare: Any = None, store: Any, thread_ids: Sequence[str] | None = None,
              executor: Any = None) -> StoreUsage: ...

    def usage(self, at: int | None = None, *, compare: Any = None, store: Any = None,
              thread_ids: Sequence[str] | None = None, executor: Any = None) -> UsageLedger | StoreUsage:
        """The usage ledger up to `at` (default: the whole run): reads as the cumulative totals (same keys as
        get_usage_from_events), `.to_pandas()` / `.by_model()` / `.by_state()` / `.compare()` as tables;
        `compare=` branches are drawn beside this run in the usage panel. With `store=`, the usage of that
        store's threads of this machine instead (`store_usage`'s `StoreLedger`, a `StoreUsage` per thread, model
        and state, priced with this explorer's prices), read on `executor` when given."""
        if store is not None:  # the run list's store_usage: per thread, model and state
            return store_usage(store, self.machine, threads=thread_ids, prices=self._session.prices, executor=executor)
        if compare is not None:
            self._usage.compare_with = list(compare) if isinstance(compare, (list, tuple)) else [compare]
        return self._usage.ledger(at, compare)

    def to_pandas(self) -> Any:
        """The line on view as a DataFrame (`log_to_pandas` with this machine): one row per entry with its replayed
        state; `verified` / `divergent` come from the line's own verification (nothing is hashed again)."""
        line = self._session.line
        verdicts = _Verdicts.of(line)
        return log_to_pandas(line.entries, self.machine, check_version=False, verify=verdicts is None,
                             verified=verdicts)

    def frame_at(self, index: int) -> dict[str, Any]:
        """The frame the widget draws at `index` of the line on view (what the static export embeds)."""
        return self._panel(CursorPanel).frame_at(index)

    def table_row(self, index: int) -> dict[str, Any]:
        """The event table's row for `index` of the line on view."""
        with self._session.lock:
            return dict(self._session.table.row(index))

    def to_html(self, path: str | Path, start: int | None = None, stop: int | None = None) -> Path:
        """One self-contained HTML file of this explorer (chart, log window, state at each index); see export.py."""
        return export_html(self, path, start, stop)


def _checked(entries: Sequence[Mapping[str, Any]], verify: bool | str, prices: Any) -> Prices:
    """Refuse what cannot be opened before anything is folded; returns the price list."""
    if not entries:
        raise AgentError("Explorer needs a log with at least its @agent.init entry; got an empty log", code="empty-log")
    if verify not in (True, False, "auto", "background"):
        raise AgentError(f"verify must be True, False, 'auto' or 'background', not {verify!r}",
                         code="invalid-verify-mode")
    return Prices(prices)


def _open(machine: Any, entries: Sequence[Mapping[str, Any]], **options: Any) -> Timeline:
    try:
        return open_line(machine, entries, **options)
    except AgentMachineVersionMismatchError as error:
        raise AgentMachineVersionMismatchError(
            f"{error.message} To see where this machine parts from the recording, open the log "
            "anyway with Explorer(machine, entries, check_version=False) (divergences are then "
            "shown), or pass the recording machine and compare_with=this one."
        ) from error


class _Verdicts(Mapping[int, "bool | None"]):
    """A line's verification as index -> verdict (True: its recorded hash matched; False: it did not, or the
    entry could not be folded; None: no hash), read off the report without a dict of every index."""

    @classmethod
    def of(cls, line: Branch) -> _Verdicts | None:
        """The line's verdicts once its fold verified all of it (None: not verified, or not yet)."""
        timeline = line.timeline
        if not timeline.verifies or timeline.built != len(line.entries):
            return None
        report = timeline.verification
        return cls(line.entries, {d.index for d in report.divergences if d.kind in ("state", "exception")})

    def __init__(self, entries: Sequence[Mapping[str, Any]], bad: set[int]) -> None:
        self._entries = entries
        self._bad = bad

    def __getitem__(self, index: int) -> bool | None:
        if index in self._bad:
            return False
        return None if recorded_state_hash(self._entries[index]) is None else True

    def __iter__(self) -> Any:
        return iter(range(len(self._entries)))

    def __len__(self) -> int:
        return len(self._entries)
