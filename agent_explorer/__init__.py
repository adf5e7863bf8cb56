"""agent_explorer: open, scrub, verify and rewrite recorded runs of statechart-driven agents.

The public surface of docs/api.md, re-exported from the layers (engine -> log -> stores -> runtime ->
explorer). Names whose module needs an optional extra (`Explorer`: `[lab]`; `PostgresEventLogStore`:
`[postgres]`) load on first use, so a server install imports this package without Jupyter or psycopg. Without
the extra they still import (as a stand-in whose first use raises `missing-dependency`, see _extras.py).

`agent_explorer.log` is the `log` action creator (as XState's `log`); the event-log layer is the subpackage
`agent_explorer.eventlog` (`from agent_explorer.eventlog.replay import replay`), so the two never share a name.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._extras import missing_extra_stand_in
from .engine import (
    and_,
    assign,
    cancel,
    create_machine,
    emit,
    from_promise,
    initial_transition,
    log,
    not_,
    or_,
    raise_,
    send_to,
    setup,
    spawn_child,
    state_in,
    stop_child,
    transition,
)
from .errors import (
    AgentError,
    AgentEventLogConflictError,
    AgentInvalidEventPayloadError,
    AgentLogFormatError,
    AgentMachineVersionMismatchError,
    AgentReplayDivergenceError,
    AgentSnapshotDivergedError,
    AgentStoreBusyError,
    AgentStoreError,
    MachineConfigError,
    NonSerializableAgentEventError,
    ProviderError,
)
from .eventlog import (
    Timeline,
    assert_agent_log_entry,
    assert_json_serializable,
    compare_machines,
    create_replay_entry,
    diff_snapshots,
    fork_event_log,
    get_log_execution_id,
    get_usage_from_events,
    init_entry,
    log_to_pandas,
    read_log,
    state_hash,
    verify_log,
    write_log,
)
from .fleet import verify_store
from .runtime import (
    ScriptedModel,
    create_decision_logic,
    create_plan_logic,
    create_text_logic,
    parse_agent_event,
    run_agent,
    setup_agent,
)
from .steps import replay
from .stores import (
    SqliteEventLogStore,
    assert_event_log_store_conformance,
    create_in_memory_event_log_store,
    open_store,
)

if TYPE_CHECKING:
    from .explorer import Explorer
    from .explorer.runs import Runs
    from .runs import find_runs, store_coverage, store_usage, summarize_runs
    from .stores.postgres import PostgresEventLogStore

__version__ = "0.1.0"

_LAZY = {
    "Explorer": (".explorer", "lab"),
    "Runs": (".explorer.runs", "lab"),
    "PostgresEventLogStore": (".stores.postgres", "postgres"),
    # A store's runs need no Jupyter; lazy so `import agent_explorer` stays as light as a server needs.
    "summarize_runs": (".runs", "lab"),
    "find_runs": (".runs", "lab"),
    "store_usage": (".runs", "lab"),
    "store_coverage": (".runs", "lab"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'agent_explorer' has no attribute {name!r}")
    module_name, extra = _LAZY[name]
    try:
        # getattr inside the try: `agent_explorer.explorer` itself imports light and loads the widget lazily.
        value = getattr(import_module(module_name, __name__), name)
    except ImportError as error:
        # The name still imports (docs/api.md: every public name does); its first use says what to install.
        value = globals()[name] = missing_extra_stand_in(name, extra, error)
        return value
    globals()[name] = value
    return value


__all__ = [
    # §1 engine
    "setup", "create_machine", "assign", "raise_", "send_to", "emit", "cancel", "log", "spawn_child",
    "stop_child", "from_promise", "and_", "or_", "not_", "state_in", "initial_transition", "transition",
    # §2 log
    "init_entry", "create_replay_entry", "replay", "verify_log", "compare_machines", "diff_snapshots",
    "Timeline", "fork_event_log", "get_usage_from_events", "get_log_execution_id", "assert_json_serializable",
    "assert_agent_log_entry", "state_hash", "read_log", "write_log", "log_to_pandas",
    # §3 stores
    "create_in_memory_event_log_store", "SqliteEventLogStore", "PostgresEventLogStore",
    "assert_event_log_store_conformance", "open_store",
    # §4 runtime
    "setup_agent", "create_text_logic", "create_decision_logic", "create_plan_logic", "ScriptedModel",
    "run_agent", "parse_agent_event",
    # §5 errors
    "AgentError", "AgentEventLogConflictError", "AgentReplayDivergenceError", "AgentMachineVersionMismatchError",
    "AgentSnapshotDivergedError", "AgentInvalidEventPayloadError", "NonSerializableAgentEventError",
    "AgentLogFormatError", "MachineConfigError", "AgentStoreBusyError", "AgentStoreError",
    "ProviderError",
    # §6 explorer
    "Explorer",
    # §7 beyond one log
    "verify_store",
    # §8 a store's runs
    "summarize_runs", "find_runs", "store_usage", "store_coverage", "Runs",
]
