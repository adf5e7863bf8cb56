"""The event log: entries, strict JSON, canonical hashing, log files, usage, replay and verification.

Pure data and pure folds over it: nothing here performs network or store I/O (files only in `files`),
and nothing here imports the stores, the runtime or the explorer.
"""

from __future__ import annotations

from ..canonical.jcs import canonical_json, state_hash
from ..canonical.strict import assert_json_serializable
from .dataframe import log_to_pandas
from .diff import Change, MachineComparison, compare_machines, diff_snapshots
from .entries import (
    INIT_EVENT_TYPE,
    USAGE_EVENT_TYPE,
    assert_agent_log_entry,
    create_replay_entry,
    fork_event_log,
    get_log_execution_id,
    init_entry,
    normalize_error,
)
from .files import iter_log, read_log, write_log
from .fold import Ledger, LedgerFactory, Step, fold
from .replay import ReplayResult, replay
from .snapshot_cache import ResumeResult, persist_snapshot, resume_state
from .timeline import Timeline
from .usage import get_usage_from_events
from .verification import Divergence, VerificationReport, verify_log
from .version_bridge import bridge_version

__all__ = [
    "INIT_EVENT_TYPE",
    "USAGE_EVENT_TYPE",
    "Change",
    "Divergence",
    "Ledger",
    "LedgerFactory",
    "Step",
    "MachineComparison",
    "ReplayResult",
    "ResumeResult",
    "Timeline",
    "VerificationReport",
    "assert_agent_log_entry",
    "assert_json_serializable",
    "bridge_version",
    "canonical_json",
    "compare_machines",
    "create_replay_entry",
    "diff_snapshots",
    "fold",
    "fork_event_log",
    "get_log_execution_id",
    "get_usage_from_events",
    "init_entry",
    "iter_log",
    "log_to_pandas",
    "normalize_error",
    "persist_snapshot",
    "read_log",
    "replay",
    "resume_state",
    "state_hash",
    "verify_log",
    "write_log",
]
