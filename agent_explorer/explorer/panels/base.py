"""What every panel is built from: the explorer's `Session` (the line on view, the cursor, the events, the lock)
and `Traits`, write access to the traitlets a panel owns and to nothing else. Never touches the front end or
another panel directly.

A panel is a class with `TRAITS` (the traitlets it owns), a constructor taking `(session, traits)` and nothing
else, subscriptions to the session's events (events.py), and `handlers()` for the message kinds it answers; the
widget lists it in `Explorer.PANELS`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, ClassVar, Literal, overload

from ...errors import AgentError
from ..messages import error_reply, parse_message
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

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["Handler", "Panel", "Router", "Traits"]

# A panel's answer to one message kind. It gets that kind's message already checked against its protocol type
# (explorer/messages.py), so each handler is annotated with it (`TableMessage`...) and reads fields, not `.get`s.
Handler = Callable[[Any], None]
Nothing = dict[str, None]  # `{}`: what a panel publishes before it has anything to show


class Traits:
    """The traitlets one panel owns, written through its session: `traits.set("table", page)`, `traits.get("table")`.

    Writing a name the panel does not own raises, so two panels can never fight over a traitlet; every write goes
    through `Session.write` (under the lock; to the browser on the kernel's loop)."""

    __slots__ = ("_names", "_session")

    def __init__(self, session: Session, names: tuple[str, ...]) -> None:
        self._session = session
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
        self._session.write(name, value)

    def get(self, name: str) -> Any:
        if name not in self._names:
            raise AttributeError(f"this panel does not own the traitlet {name!r} (it owns {sorted(self._names)})")
        return self._session.read(name)

    def hold(self) -> AbstractContextManager[None]:
        """Batch several writes into one comm message (ipywidgets' `hold_sync`)."""
        return self._session.hold()


class Panel:
    """A controller of one part of the widget. Subclasses name their traitlets in `TRAITS` and the message kinds
    they answer in `handlers()`; the session is their only dependency."""

    TRAITS: ClassVar[tuple[str, ...]] = ()

    def __init__(self, session: Session, traits: Traits) -> None:
        self.session = session
        self.traits = traits

    def handlers(self) -> Mapping[str, Handler]:
        return {}


class Router:
    """Every message from the front end (the widget's `on_msg` callback): checked against its protocol shape once,
    here (a bad one is answered with an `error` reply, not a KeyError in a panel), then handed to the one panel that
    answers its kind. Two panels answering one kind is a wiring error."""

    def __init__(self, panels: list[Panel], reply: Callable[[Any], None]) -> None:
        self.handlers: dict[str, Handler] = {}
        for panel in panels:
            for kind, handler in panel.handlers().items():
                if kind in self.handlers:
                    raise AssertionError(f"two panels answer the message kind {kind!r}")
                self.handlers[kind] = handler
        self._reply = reply

    def __call__(self, _widget: Any, content: Any, _buffers: Any) -> None:
        try:
            message = parse_message(content)
        except AgentError as error:
            self._reply(error_reply(error, content))
            return
        self.handlers[message["kind"]](message)
