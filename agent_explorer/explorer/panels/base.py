"""What every panel is built from: the shared `View` (the line on view and its indexes) and `Traits`, write
access to the traitlets a panel owns and to nothing else. Never touches the front end directly."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Literal, overload

from ..branches import Branch
from ..prices import Prices
from ..protocol import (
    BranchComparisonView,
    ComposerView,
    CoverageData,
    Frame,
    Graph,
    Info,
    LineageView,
    LiveView,
    PendingFrame,
    SearchResults,
    StateTrack,
    TablePage,
    UsageLedgerView,
    Verification,
)
from ..table import EventTable
from ..usage import UsageIndex

__all__ = ["Handler", "Panel", "Traits", "View"]

# A panel's answer to one message kind. It gets that kind's message already checked against its protocol type
# (explorer/messages.py), so each handler is annotated with it (`TableMessage`...) and reads fields, not `.get`s.
Handler = Callable[[Any], None]
Nothing = dict[str, None]  # `{}`: what a panel publishes before it has anything to show


class Traits:
    """The traitlets one panel owns, on one widget: `traits.set("table", page)`, `traits.get("table")`.

    Writing a name the panel does not own raises, so two panels can never fight over a traitlet."""

    __slots__ = ("_names", "_widget")

    def __init__(self, widget: Any, names: tuple[str, ...]) -> None:
        self._widget = widget
        self._names = frozenset(names)

    # Each traitlet's payload type (protocol.TRAITS), so mypy checks every write a panel makes: a builder that
    # returns the wrong shape, or a field of the wrong type, fails the type check instead of the browser.
    @overload
    def set(self, name: Literal["index", "length"], value: int) -> None: ...
    @overload
    def set(self, name: Literal["info"], value: Info) -> None: ...
    @overload
    def set(self, name: Literal["graph"], value: Graph) -> None: ...
    @overload
    def set(self, name: Literal["frame"], value: Frame | PendingFrame | Nothing) -> None: ...
    @overload
    def set(self, name: Literal["table"], value: TablePage) -> None: ...
    @overload
    def set(self, name: Literal["table_types"], value: list[tuple[str, int]] | list[list[Any]]) -> None: ...
    @overload
    def set(self, name: Literal["verification"], value: Verification) -> None: ...
    @overload
    def set(self, name: Literal["comparison"], value: BranchComparisonView | Nothing) -> None: ...
    @overload
    def set(self, name: Literal["usage_series"], value: list[list[float | int]]) -> None: ...
    @overload
    def set(self, name: Literal["coverage_data"], value: CoverageData | Nothing) -> None: ...
    @overload
    def set(self, name: Literal["search_results"], value: SearchResults | Nothing) -> None: ...
    @overload
    def set(self, name: Literal["usage_ledger"], value: UsageLedgerView | Nothing) -> None: ...
    @overload
    def set(self, name: Literal["lineage"], value: LineageView | Nothing) -> None: ...
    @overload
    def set(self, name: Literal["composer"], value: ComposerView | Nothing) -> None: ...
    @overload
    def set(self, name: Literal["live"], value: LiveView | Nothing) -> None: ...
    @overload
    def set(self, name: Literal["state_track"], value: StateTrack | Nothing) -> None: ...

    def set(self, name: str, value: Any) -> None:
        if name not in self._names:
            raise AttributeError(f"this panel does not own the traitlet {name!r} (it owns {sorted(self._names)})")
        setattr(self._widget, name, value)

    def get(self, name: str) -> Any:
        if name not in self._names:
            raise AttributeError(f"this panel does not own the traitlet {name!r} (it owns {sorted(self._names)})")
        return getattr(self._widget, name)

    def hold(self) -> Any:
        """Batch several writes into one comm message (ipywidgets' `hold_sync`)."""
        return self._widget.hold_sync()


class View:
    """The line on view and what every panel reads of it: the line (recording or branch), its usage index and
    event table. `show(line)` switches the line and tells every listener, in the order they subscribed."""

    def __init__(self, machine: Any, root: Branch, usage: UsageIndex | None, *, page_size: int = 100,
                 prices: Prices | None = None) -> None:
        self.machine = machine
        self.prices = prices if prices is not None else Prices(None)
        self.definition: Mapping[str, Any] = machine.definition
        self.root = root
        self.line = root
        self.usage = usage  # None while a long log's background thread builds it
        self.table = EventTable(root.entries)
        self.page_size = page_size
        self._line_listeners: list[Callable[[Branch], None]] = []

    @property
    def entries(self) -> list[Mapping[str, Any]]:
        return self.line.entries

    def lines(self) -> list[Branch]:
        return [self.root, *self.root.descendants()]

    def on_line(self, listener: Callable[[Branch], None]) -> None:
        self._line_listeners.append(listener)

    def show(self, line: Branch) -> None:
        self.line = line
        self.usage = UsageIndex(line.entries)
        self.table = EventTable(line.entries)
        for listener in self._line_listeners:
            listener(line)


class Panel:
    """A controller of one part of the widget. Subclasses name their traitlets in `TRAITS` and the message kinds
    they answer in `handlers()`; they get every dependency through their constructor."""

    TRAITS: ClassVar[tuple[str, ...]] = ()

    def __init__(self, view: View, traits: Traits) -> None:
        self.view = view
        self.traits = traits

    def handlers(self) -> Mapping[str, Handler]:
        return {}
