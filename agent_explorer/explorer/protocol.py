"""The widget's wire protocol, typed once: every traitlet payload (Python -> JS) and every message (JS -> Python).

Python builds payloads as these TypedDicts (mypy checks the builders); `typescript()` renders the same types
as a TypeScript declaration file, which `.ci/run` writes to js/src/protocol.d.ts (generated, git-ignored) before
`tsc --checkJs` checks the front end against it. So a field renamed on one side fails the other side's check.
Pure type declarations: no behaviour lives here.
"""

from __future__ import annotations

import sys
import types
import typing
from typing import Any, Literal, NotRequired, Union, get_args, get_origin, get_type_hints

# typing_extensions (pydantic's own dependency): pydantic validates the messages against these TypedDicts
# (explorer/messages.py) and, before Python 3.12, accepts only typing_extensions' TypedDict.
from typing_extensions import TypedDict, is_typeddict

__all__ = ["MESSAGES", "REPLIES", "RUNS_MESSAGES", "RUNS_TRAITS", "TRAITS", "typescript"]

JSON = Any  # any JSON value (untrusted text from the log: drawn as text, never as HTML)


# -- traitlet payloads -------------------------------------------------------------------------------------


class Info(TypedDict):
    machineId: str
    machineVersion: str
    threadId: str | None
    compareWith: str | None
    line: NotRequired[str]


class Graph(TypedDict):
    dot: str
    nodes: dict[str, str]  # state id -> SVG element id
    edges: dict[str, list[str]]  # transition id -> SVG element ids
    labels: dict[str, str]  # state id -> label
    lines: dict[str, int]  # transition id -> its label's line on a state's shared self-loop (graph.py)
    collapsed: dict[str, list[str]]  # state id inside a collapsed state -> [that state's id, the path to it]
    collapsible: list[str]  # the compound and parallel states that can be collapsed


class EntryView(TypedDict):
    index: int | None
    id: str | None
    type: str | None
    recordedAt: str | None
    causationId: str | None
    machineVersion: str | None
    eventText: str
    eventTruncated: bool


class HashCheck(TypedDict):
    recorded: str | None
    replayed: str | None
    ok: bool | None


class ChildView(TypedDict):
    id: str
    src: JSON
    status: str | None


class EffectView(TypedDict):
    kind: str
    site: str | None
    requestId: str | None
    detail: str | None


class TimerView(TypedDict):
    id: str
    requestId: str | None
    event: JSON
    delay: float | int | None
    stateId: str | None
    armedAt: int | None


class InFlightView(TypedDict):
    id: str
    src: str | None
    kind: str | None
    requestId: str | None
    requestedAt: int | None


class RecordingSideView(TypedDict):
    """At a divergent index: the states the recording was in (`source` "recorder": the compare_with machine's own
    fold; "inferred": from what the recording journaled next), beside the replay's."""

    index: int
    source: str
    active: list[str]
    valueText: str | None
    reason: str
    candidates: bool
    reproduces: bool | None


class CostView(TypedDict):
    total: float
    byModel: dict[str, float]
    unpriced: list[str]  # models with usage but no price (their cost is not in `total`)


class PendingFrame(TypedDict):
    """The frame of an index the background fold has not reached yet."""

    index: int
    length: int
    pending: Literal[True]
    built: int
    entry: EntryView


class Frame(TypedDict):
    """The small per-index state the chart and the state panel draw."""

    index: int
    length: int
    entry: EntryView
    error: NotRequired[str]  # the frame could not be built: only the entry is there
    status: NotRequired[str]
    value: NotRequired[JSON]
    valueText: NotRequired[str]
    active: NotRequired[list[str]]
    taken: NotRequired[list[str]]
    children: NotRequired[list[ChildView]]
    tags: NotRequired[list[str]]
    changed: NotRequired[list[list[str | int]]]
    usage: NotRequired[dict[str, JSON] | None]
    cost: NotRequired[CostView | None]  # with prices: what the usage up to here cost, in USD
    hash: NotRequired[HashCheck]
    context: NotRequired[JSON]
    contextNote: NotRequired[str]
    output: NotRequired[JSON]
    machineError: NotRequired[JSON]  # the machine's own error, once its status is "error"
    foldError: NotRequired[str]  # folding this entry raised: the state shown is the one before it
    recording: NotRequired[RecordingSideView]  # at a divergent index of the recorded line
    effects: NotRequired[list[EffectView]]
    timers: NotRequired[list[TimerView]]
    inflight: NotRequired[list[InFlightView]]


class TableRow(TypedDict):
    index: int
    id: str | None
    type: str
    recordedAt: str | None
    causationId: str | None
    usage: float | int | None
    summary: str
    divergent: bool


class TableQuery(TypedDict):
    type: str
    text: str


class TablePage(TypedDict):
    offset: int
    limit: int
    total: int
    rows: list[TableRow]
    query: TableQuery
    marks: NotRequired[list[int]]  # the filter's hits, marked on the slider track (capped)


class DivergenceDetail(TypedDict):
    index: int | None
    eventId: str | None
    event: JSON
    kind: str | None
    expectedHash: str | None
    actualHash: str | None


class MachinesComparison(TypedDict):
    """With compare_with: where the replay parts from the recording machine; a change's `before` is the
    recording's value, `after` the replay's (labels name both sides)."""

    index: int | None
    diff: list[dict[str, JSON]]
    error: NotRequired[str]
    before: NotRequired[str]
    after: NotRequired[str]
    transitionsBefore: NotRequired[list[str]]
    transitionsAfter: NotRequired[list[str]]


class Verification(TypedDict):
    status: Literal["ok", "diverged", "pending", "off", "error"]
    first: int | None
    count: int
    ranges: list[list[int]]
    detail: DivergenceDetail | None
    message: str | None
    checked: NotRequired[int]
    unverified: NotRequired[int]
    entries: NotRequired[int]
    progress: NotRequired[float]
    machines: NotRequired[MachinesComparison | None]


class AppendedView(TypedDict):
    index: int
    type: str | None
    ignored: bool


class ComparedBranch(TypedDict):
    threadId: str | None
    name: str
    appended: list[AppendedView]


class BranchComparisonView(TypedDict):
    index: int | None
    diff: list[dict[str, JSON]]
    lengthA: int
    lengthB: int
    forkedAt: int | None
    reason: str
    eventA: JSON
    eventB: JSON
    lineName: NotRequired[str]
    branch: NotRequired[ComparedBranch]


class LineageNode(TypedDict):
    id: str
    parent: str | None
    forkedAt: int | None
    length: int
    appended: int
    threadId: str | None


class LineageView(TypedDict):
    current: str
    nodes: list[LineageNode]
    forks: NotRequired[list[int]]  # fork points of the line on view, marked on the slider track


class SearchQueryView(TypedDict):
    text: str
    regex: bool
    path: str
    scope: str
    case: bool
    type: str


class SearchHitView(TypedDict):
    index: int
    where: str
    path: str
    text: str
    until: int


class SearchResults(TypedDict):
    query: SearchQueryView
    total: NotRequired[int]
    offset: NotRequired[int]
    limit: NotRequired[int]
    hits: NotRequired[list[SearchHitView]]
    error: NotRequired[str | None]
    pending: NotRequired[bool]
    progress: NotRequired[float]
    marks: NotRequired[list[int]]  # hit indices for the slider track (thinned)
    ranges: NotRequired[list[list[int]]]  # context hits spanning indices


class CoverageData(TypedDict):
    runs: int
    entries: int
    states: dict[str, int]
    transitions: dict[str, int]
    stateLevels: dict[str, int]
    transitionLevels: dict[str, int]
    neverTaken: list[str]
    neverEntered: list[str]
    totalTransitions: int
    source: NotRequired[str]


class UsageBranchSeries(TypedDict):
    label: str
    forkedAt: int | None
    series: list[list[float | int]]


class UsageLedgerView(TypedDict):
    label: str
    records: int
    series: dict[str, list[list[float | int]]]
    byState: list[list[JSON]]
    byModel: list[list[JSON]]
    hasCost: bool
    total: float | int
    cost: float | None
    at: NotRequired[int]
    branches: NotRequired[list[UsageBranchSeries]]


class FieldView(TypedDict):
    name: str
    type: str
    required: bool
    default: JSON
    enum: list[JSON] | None
    description: str | None


class ChoiceView(TypedDict):
    type: str
    kind: Literal["event", "done", "error", "timer"]
    enabled: bool
    template: dict[str, JSON]
    fields: list[FieldView]
    note: str | None


class ComposerCheck(TypedDict):
    ok: bool
    nonce: NotRequired[JSON]
    ignored: NotRequired[bool]
    message: NotRequired[str]
    event: NotRequired[JSON]
    error: NotRequired[str]
    fields: NotRequired[list[str]]


class ComposerSent(TypedDict):
    index: int
    ignored: bool
    message: str
    line: str
    nonce: JSON
    event: NotRequired[JSON]  # the event as journaled (schema defaults filled)


class DecisionView(TypedDict):
    """A decision in flight: it completes with the event it chooses, one of `events`."""

    id: str
    requestId: str | None
    events: list[str]


class ComposerView(TypedDict):
    index: int
    line: NotRequired[str]
    appendsTo: NotRequired[str | None]
    state: NotRequired[str]
    status: NotRequired[str | None]
    choices: list[ChoiceView]
    decisions: NotRequired[list[DecisionView]]
    error: NotRequired[str]
    check: NotRequired[ComposerCheck]
    sent: NotRequired[ComposerSent]


class LiveView(TypedDict):
    following: bool
    newEntries: int  # entries that arrived past the cursor since it left the tail
    lastAppendAt: str | None  # when this explorer last saw an append (ISO, UTC)
    lastRecordedAt: str | None  # the last new entry's own recordedAt
    error: str | None  # why following stopped
    seq: int  # which refresh of the views this is: a front end acknowledges it once drawn (`live-drawn`)


class StateTrack(TypedDict):
    """The active states of every index of the line on view, so the browser lights them on a slider move without
    waiting for the kernel (explorer/track.py). `codes` is one number per index of [0, length): which of
    `configurations` (lists of active state ids, as a frame's `active`) the index is in; unsigned little-endian
    ints of `width` bytes, sent as a binary buffer (a DataView in the browser)."""

    line: str  # the line the track belongs to (a checkout replaces it)
    length: int  # indices covered: [0, length)
    configurations: list[list[str]]
    width: Literal[1, 2]
    codes: bytes


TRAITS: dict[str, Any] = {
    "index": int,
    "length": int,
    "info": Info,
    "graph": Graph,
    "frame": Union[Frame, PendingFrame, dict[str, None]],  # noqa: UP007 - rendered to TypeScript by name
    "table": TablePage,
    "table_types": list[tuple[str, int]],
    "verification": Verification,
    "comparison": Union[BranchComparisonView, dict[str, None]],  # noqa: UP007
    "usage_series": list[list[float | int]],
    "coverage_data": Union[CoverageData, dict[str, None]],  # noqa: UP007
    "search_results": Union[SearchResults, dict[str, None]],  # noqa: UP007
    "usage_ledger": Union[UsageLedgerView, dict[str, None]],  # noqa: UP007
    "lineage": Union[LineageView, dict[str, None]],  # noqa: UP007
    "composer": Union[ComposerView, dict[str, None]],  # noqa: UP007
    "live": Union[LiveView, dict[str, None]],  # noqa: UP007
    "state_track": Union[StateTrack, dict[str, None]],  # noqa: UP007
}
"""Every synced traitlet of the Explorer and the type of its value (`{}` where a panel has nothing yet)."""


# -- messages (JS -> Python, `model.send`) ------------------------------------------------------------------


# A field marked NotRequired has a default in the panel that answers it (the front end sends every field).


class TableMessage(TypedDict):
    kind: Literal["table"]
    offset: int
    limit: int
    type: NotRequired[str]  # "" / absent: every type
    text: NotRequired[str]


class SearchMessage(TypedDict):
    kind: Literal["search"]
    text: str
    regex: NotRequired[bool]  # default False
    path: NotRequired[str]  # default: anywhere
    scope: NotRequired[str]  # "both" (default), "events" or "context"; another is refused by the search
    case: NotRequired[bool]


class SearchPageMessage(TypedDict):
    kind: Literal["search-page"]
    offset: int


class CoverageMessage(TypedDict):
    kind: Literal["coverage"]


class UsageLedgerMessage(TypedDict):
    kind: Literal["usage-ledger"]


class CheckoutMessage(TypedDict):
    kind: Literal["checkout"]
    branch: str


class ComposerMessage(TypedDict):
    kind: Literal["composer"]
    open: NotRequired[bool]  # default True


class ComposeMessage(TypedDict):
    kind: Literal["compose-check", "compose-send"]
    event: dict[str, JSON]
    nonce: NotRequired[JSON]  # echoed back with the answer, so the page knows which check it is


class FollowMessage(TypedDict):
    kind: Literal["follow"]
    on: NotRequired[bool]  # default True


class JumpToTailMessage(TypedDict):
    kind: Literal["jump-to-tail"]


class CollapseMessage(TypedDict):
    kind: Literal["collapse"]
    state: str  # a compound or parallel state's id
    collapsed: bool


class LiveDrawnMessage(TypedDict):
    kind: Literal["live-drawn"]
    seq: int  # the `live.seq` just drawn: the next refresh may go (flow control while following)


MESSAGES: dict[str, Any] = {
    "table": TableMessage,
    "search": SearchMessage,
    "search-page": SearchPageMessage,
    "coverage": CoverageMessage,
    "usage-ledger": UsageLedgerMessage,
    "checkout": CheckoutMessage,
    "composer": ComposerMessage,
    "compose-check": ComposeMessage,
    "compose-send": ComposeMessage,
    "follow": FollowMessage,
    "jump-to-tail": JumpToTailMessage,
    "live-drawn": LiveDrawnMessage,
    "collapse": CollapseMessage,
}
"""Every message kind the front end may send, and its shape."""


# -- the run list (`Runs`, explorer/runs.py): its own traitlets and messages ---------------------------------------


class RunRow(TypedDict):
    threadId: str
    entries: int
    lastRecorded: str | None  # ISO 8601, UTC
    version: str | None
    state: str  # the last state as one line ("" when unreadable)
    status: str  # one of run_list.STATUSES
    owed: int | None
    verified: bool | None
    divergentIndex: int | None
    tokens: int
    cost: float | None  # USD; None without prices
    error: str | None  # why the thread is unreadable


class RunsSortView(TypedDict):
    column: str
    descending: bool


class RunsFilterView(TypedDict):
    status: list[str]  # empty: every status
    state: str
    text: str
    verified: bool | None


class RunsPage(TypedDict):
    offset: int
    limit: int
    total: int  # rows the list shows (after the filter), across all pages
    rows: list[RunRow]
    sort: RunsSortView
    filter: RunsFilterView


class RunsCounts(TypedDict):
    counts: dict[str, int]  # status -> threads folded with it
    folded: int
    threads: int  # threads known in the store (or given)


class RunsProgress(TypedDict):
    done: int
    total: int
    folding: bool
    following: bool
    error: str | None  # why folding or following stopped


class RunsSelection(TypedDict):
    threadId: str | None
    error: str | None  # why the thread could not be opened


RUNS_TRAITS: dict[str, Any] = {
    "page": Union[RunsPage, dict[str, None]],  # noqa: UP007
    "counts": Union[RunsCounts, dict[str, None]],  # noqa: UP007
    "progress": Union[RunsProgress, dict[str, None]],  # noqa: UP007
    "selection": Union[RunsSelection, dict[str, None]],  # noqa: UP007
}
"""Every synced traitlet of the run list (`Runs`) and the type of its value."""


class RunsPageMessage(TypedDict):
    kind: Literal["runs-page"]
    offset: int


class RunsSortMessage(TypedDict):
    kind: Literal["runs-sort"]
    column: str
    descending: bool


class RunsFilterMessage(TypedDict):
    kind: Literal["runs-filter"]
    status: list[str]
    state: str
    text: str
    verified: bool | None


class RunsSelectMessage(TypedDict):
    kind: Literal["runs-select"]
    threadId: str


RUNS_MESSAGES: dict[str, Any] = {
    "runs-page": RunsPageMessage,
    "runs-sort": RunsSortMessage,
    "runs-filter": RunsFilterMessage,
    "runs-select": RunsSelectMessage,
}
"""Every message the run list's front end may send, and its shape."""


# -- replies (Python -> JS, `model.on("msg:custom")`) -----------------------------------------------------------


class ErrorReply(TypedDict):
    """A message the widget could not take (explorer/messages.py): which kind, the error's stable code, and why."""

    kind: Literal["error"]
    about: str | None  # the kind of the message refused (None: it had none)
    code: str
    message: str


REPLIES: dict[str, Any] = {"error": ErrorReply}
"""Every message the Python side sends to the front end (beside the traitlets), and its shape."""


# -- TypeScript rendering ----------------------------------------------------------------------------------


def _ts(tp: Any, names: set[str]) -> str:
    if tp is Any:
        return "any"
    if tp is type(None) or tp is None:
        return "null"
    if tp is str:
        return "string"
    if tp is bool:
        return "boolean"
    if tp in (int, float):
        return "number"
    if tp is bytes:  # ipywidgets sends a bytes value as a binary buffer: the model holds a DataView
        return "DataView"
    if isinstance(tp, type) and is_typeddict(tp):
        names.add(tp.__name__)
        return tp.__name__
    origin, args = get_origin(tp), get_args(tp)
    if origin is Literal:
        return " | ".join(repr(a) if isinstance(a, str) else str(a).lower() for a in args).replace("'", '"')
    if origin in (Union, types.UnionType):
        return " | ".join(_ts(a, names) for a in args)
    if origin is list:
        inner = _ts(args[0], names)
        return f"Array<{inner}>"
    if origin is tuple:
        return "[" + ", ".join(_ts(a, names) for a in args) + "]"
    if origin is dict:
        return f"Record<string, {_ts(args[1], names)}>"
    if origin in (NotRequired, typing.Required):
        return _ts(args[0], names)
    raise TypeError(f"protocol type {tp!r} has no TypeScript rendering")


def _interface(td: Any, names: set[str]) -> str:
    hints = get_type_hints(td, globalns=vars(sys.modules[__name__]), include_extras=True)
    lines = [f"export interface {td.__name__} {{"]
    for key, tp in hints.items():
        mark = "?" if get_origin(tp) is NotRequired else ""
        lines.append(f"  {key}{mark}: {_ts(tp, names)};")
    lines.append("}")
    return "\n".join(lines)


def _trait(tp: Any, names: set[str]) -> str:
    """A traitlet's TypeScript type. A dict traitlet starts as `{}` and a panel may publish one of several
    shapes, so its type is every shape's fields, each optional (the front end reads what is there)."""
    members = get_args(tp) if get_origin(tp) in (Union, types.UnionType) else (tp,)
    shapes = [m for m in members if isinstance(m, type) and is_typeddict(m)]
    if not shapes:
        return _ts(tp, names)
    return "Partial<" + " & ".join(_ts(shape, names) for shape in shapes) + ">"


def typescript() -> str:
    """The protocol as a TypeScript declaration file (js/src/protocol.d.ts), deterministic."""
    names: set[str] = set()
    traits = "\n".join(f"  {name}: {_trait(tp, names)};" for name, tp in TRAITS.items())
    messages = " | ".join(sorted({_ts(tp, names) for tp in MESSAGES.values()}))
    runs_traits = "\n".join(f"  {name}: {_trait(tp, names)};" for name, tp in RUNS_TRAITS.items())
    runs_messages = " | ".join(sorted({_ts(tp, names) for tp in RUNS_MESSAGES.values()}))
    replies = " | ".join(sorted({_ts(tp, names) for tp in REPLIES.values()}))
    done: set[str] = set()
    blocks: list[str] = []
    module = vars(sys.modules[__name__])
    while names - done:
        for name in sorted(names - done):
            done.add(name)
            blocks.append(_interface(module[name], names))
    header = (
        "// Generated by agent_explorer.explorer.protocol.typescript(): the widget's wire protocol.\n"
        "// Do not edit: edit the TypedDicts in agent_explorer/explorer/protocol.py (this file is git-ignored).\n"
    )
    model = (
        "/** The traitlets the Python side syncs, by name. */\n"
        f"export interface Traits {{\n{traits}\n}}\n\n"
        "/** Every message the front end may send with `model.send`. */\n"
        f"export type Message = {messages};\n\n"
        "/** Every message the Python side sends to the front end (`msg:custom`). */\n"
        f"export type Reply = {replies};\n\n"
        "/** The anywidget model, typed by the traitlets above. */\n"
        "export interface Model {\n"
        "  get<K extends keyof Traits>(name: K): Traits[K];\n"
        "  set<K extends keyof Traits>(name: K, value: Traits[K]): void;\n"
        "  save_changes(): void;\n"
        "  send(message: Message): void;\n"
        "  on(event: string, callback: (...args: any[]) => void): void;\n"
        "  off(event: string, callback: (...args: any[]) => void): void;\n"
        "  /** Only on a static export that holds part of the log: the indices [start, stop] it holds. */\n"
        "  window?: [number, number];\n"
        "}\n\n"
        "/** The run list's traitlets (`Runs`), by name. */\n"
        f"export interface RunsTraits {{\n{runs_traits}\n}}\n\n"
        "/** Every message the run list may send. */\n"
        f"export type RunsMessage = {runs_messages};\n\n"
        "/** The run list's anywidget model. */\n"
        "export interface RunsModel {\n"
        "  get<K extends keyof RunsTraits>(name: K): RunsTraits[K];\n"
        "  send(message: RunsMessage): void;\n"
        "  on(event: string, callback: (...args: any[]) => void): void;\n"
        "  off(event: string, callback: (...args: any[]) => void): void;\n"
        "}\n"
    )
    return header + "\n" + "\n\n".join(blocks) + "\n\n" + model


def main(argv: list[str] | None = None) -> int:
    """`python -m agent_explorer.explorer.protocol PATH`: write the declaration file to PATH (or stdout)."""
    args = sys.argv[1:] if argv is None else argv
    text = typescript()
    if args:
        with open(args[0], "w", encoding="utf-8") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
