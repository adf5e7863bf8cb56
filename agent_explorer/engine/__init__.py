"""Pure statechart engine with XState v5 semantics: config -> nodes, transition algorithm, snapshots.

Nothing here performs I/O, reads a clock, or runs actors; `transition` returns the actions a host
owes. Knows nothing of logs, stores or the runtime.
"""

from __future__ import annotations

from .actions import (
    ExecutableAction,
    assign,
    cancel,
    emit,
    enqueue_actions,
    log,
    raise_,
    send_to,
    spawn_child,
    stop_child,
)
from ._util import UNDEFINED
from .actors import ActorLogic, ChildRef, PromiseLogic, from_promise, resolve_logic
from .algorithm import Microstep
from .guards import and_, not_, or_, state_in
from .machine import Implementations, Machine, Setup, create_machine, setup
from .snapshot import Snapshot, matches_state
from .transition import (
    get_initial_microsteps,
    get_microsteps,
    initial_transition,
    transition,
    transition_with_trace,
)

__all__ = [
    "setup",
    "create_machine",
    "assign",
    "raise_",
    "send_to",
    "emit",
    "cancel",
    "log",
    "spawn_child",
    "stop_child",
    "enqueue_actions",
    "from_promise",
    "and_",
    "or_",
    "not_",
    "state_in",
    "initial_transition",
    "transition",
    "transition_with_trace",
    "get_microsteps",
    "get_initial_microsteps",
    "Machine",
    "Setup",
    "Implementations",
    "Snapshot",
    "ExecutableAction",
    "ChildRef",
    "PromiseLogic",
    "Microstep",
    "matches_state",
    "ActorLogic",
    "resolve_logic",
    "UNDEFINED",
]
