"""Pure statechart engine with XState v5 semantics: config -> nodes, transition algorithm, snapshots.

Nothing here performs I/O, reads a clock, or runs actors; `transition` returns the actions a host
owes. Knows nothing of logs, stores or the runtime.
"""

from __future__ import annotations

from ._util import UNDEFINED
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
    "UNDEFINED",
    "ActorLogic",
    "ChildRef",
    "ExecutableAction",
    "Implementations",
    "Machine",
    "Microstep",
    "PromiseLogic",
    "Setup",
    "Snapshot",
    "and_",
    "assign",
    "cancel",
    "create_machine",
    "emit",
    "enqueue_actions",
    "from_promise",
    "get_initial_microsteps",
    "get_microsteps",
    "initial_transition",
    "log",
    "matches_state",
    "not_",
    "or_",
    "raise_",
    "resolve_logic",
    "send_to",
    "setup",
    "spawn_child",
    "state_in",
    "stop_child",
    "transition",
    "transition_with_trace",
]
