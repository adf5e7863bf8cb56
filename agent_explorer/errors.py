"""Every error agent_explorer raises, in one module so callers can catch by class or by `.code`.

Each class carries a stable `code` string (safe to match on across versions) and keyword
context attributes; messages say what went wrong, where, and what to do about it.

    AgentError                              code: given per raise (e.g. "missing-thread-id")
    ├── AgentEventLogConflictError          "event-log-conflict"    thread_id, expected_index, actual_length
    ├── AgentReplayDivergenceError          "replay-divergence"     event_id, index, kind, expected_hash, actual_hash
    ├── AgentMachineVersionMismatchError    "machine-version-mismatch"
    ├── AgentSnapshotDivergedError          "snapshot-diverged"
    ├── AgentInvalidEventPayloadError       "invalid-event-payload"
    ├── NonSerializableAgentEventError      "non-serializable"      path
    ├── AgentLogFormatError                 "log-format"            line, truncated, valid_entries
    ├── MachineConfigError                  "invalid-machine-config" path
    ├── AgentStoreBusyError                 "store-busy"            (retryable: a lock was not had in time)
    ├── AgentStoreError                     "store-error"           (a storage failure that is not a conflict;
    │                                       "store-read-only": a write to a store opened read-only)
    └── ProviderError                       "provider-error"        status, provider_request_id (a model call
                                                                    that failed after the SDK's retries)

Plain `AgentError`s carry one of these codes (catch `AgentError` and match `.code`):
    arguments   invalid-argument, invalid-verify-mode, invalid-fork, invalid-fork-index, invalid-clock,
                invalid-machine, invalid-machine-ref, invalid-schema, invalid-search-path,
                invalid-search-pattern, invalid-search-scope, invalid-export-range, invalid-prices,
                invalid-widget-message (a message from the widget's page that does not fit the protocol)
    engine      invalid-event, invalid-action, invalid-snapshot, unknown-actor, guard-not-implemented,
                infinite-loop, non-persistable-child
    log         invalid-init-entry, missing-init-entry, invalid-entry-field, reserved-event-type,
                duplicate-entry-id, empty-log, not-quiescent (`.in_flight`), migration-failed,
                engine-unavailable, no-effect-ledger (the log layer's replay/Timeline asked what is owed)
    runtime     missing-thread-id, event-log-conflict (explicit events differ from the thread),
                missing-executor, invalid-executor-result, decision-rejected, scripted-model-exhausted,
                run-limit, version-bridge-needs-new-thread
    providers   invalid-prompt
    CLI, files  file-not-found, file-exists, thread-not-found, thread-not-empty, machine-not-found,
                untrusted-machine-ref (a log's machineRef, not imported without consent),
                missing-lab, missing-bundle, missing-dependency, no-free-port, sample-run-failed
    fleet       machine-not-importable (worker processes need a 'module:attr'), machine-mismatch (a worker's
                import of the machine has another id or version than the caller's), fleet-task-failed (the
                executor itself failed: a broken process pool, a task Dask stopped retrying), coverage-failed /
                usage-failed (a store's thread could not be folded / read for the explorer's fleet views)
    runs        unknown-state (find_runs / the run list's state filter named no state of the machine; also
                Explorer.collapse / expand naming no compound or parallel state)
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AgentError",
    "AgentEventLogConflictError",
    "AgentReplayDivergenceError",
    "AgentMachineVersionMismatchError",
    "AgentSnapshotDivergedError",
    "AgentInvalidEventPayloadError",
    "NonSerializableAgentEventError",
    "AgentLogFormatError",
    "MachineConfigError",
    "AgentStoreBusyError",
    "AgentStoreError",
    "ProviderError",
]


class AgentError(Exception):
    """Base of every agent_explorer error; `code` is stable, the message is for people."""

    code: str = "agent-error"

    def __init__(self, message: str = "", *, code: str | None = None, **context: Any) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        for key, value in context.items():
            setattr(self, key, value)

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> Any:  # keep context attributes across pickling (multiprocessing)
        return (_rebuild_error, (type(self), self.message, self.__dict__.copy()))


def _rebuild_error(cls: type[AgentError], message: str, state: dict[str, Any]) -> AgentError:
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    error.__dict__.update(state)
    return error


class AgentEventLogConflictError(AgentError):
    """A writer's expected_index is not the thread's length: another writer got there first."""

    code = "event-log-conflict"
    thread_id: str
    expected_index: int
    actual_length: int

    def __init__(
        self,
        thread_id: str,
        expected_index: int,
        actual_length: int,
        message: str | None = None,
    ) -> None:
        super().__init__(
            message
            or (
                f"Append to thread {thread_id!r} expected index {expected_index}, but the thread "
                f"has {actual_length} entries: another writer appended first. Re-read the thread "
                f"and retry from index {actual_length}."
            ),
            thread_id=thread_id,
            expected_index=expected_index,
            actual_length=actual_length,
        )

    @property
    def actual_index(self) -> int:
        """The upstream design's name for the same number (the next index the thread expects)."""
        return self.actual_length


class AgentReplayDivergenceError(AgentError):
    """Replay derived a different state than the one the log recorded (or, strict, no hash)."""

    code = "replay-divergence"
    event_id: str | None
    index: int
    kind: str
    expected_hash: str | None
    actual_hash: str | None
    event: Any

    def __init__(
        self,
        message: str,
        *,
        event_id: str | None,
        index: int,
        kind: str,
        expected_hash: str | None = None,
        actual_hash: str | None = None,
        event: Any = None,
    ) -> None:
        super().__init__(
            message,
            event_id=event_id,
            index=index,
            kind=kind,
            expected_hash=expected_hash,
            actual_hash=actual_hash,
            event=event,
        )


class AgentMachineVersionMismatchError(AgentError):
    """An entry was recorded by another machine id or version than the one replaying it."""

    code = "machine-version-mismatch"


class AgentSnapshotDivergedError(AgentError):
    """A cached snapshot disagrees with the state its log replays to; drop the cache."""

    code = "snapshot-diverged"


class AgentInvalidEventPayloadError(AgentError):
    """A payload off the wire is not a valid event for this machine (answer it with a 400)."""

    code = "invalid-event-payload"


class NonSerializableAgentEventError(AgentError):
    """A value is not strict JSON; `path` names where (e.g. `event.items[3].when`)."""

    code = "non-serializable"
    path: str

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message, path=path)


class AgentLogFormatError(AgentError):
    """A log file or entry is malformed; `line` is 1-based where known."""

    code = "log-format"
    line: int | None
    truncated: bool
    valid_entries: int | None
    index: int | None

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        truncated: bool = False,
        valid_entries: int | None = None,
        index: int | None = None,
    ) -> None:
        super().__init__(
            message, line=line, truncated=truncated, valid_entries=valid_entries, index=index
        )


class MachineConfigError(AgentError):
    """A machine config is invalid; `path` names the state (e.g. `#agent.thinking`)."""

    code = "invalid-machine-config"

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message, path=path)


class AgentStoreBusyError(AgentError):
    """The store's write lock could not be had in time. Retryable; nothing was written."""

    code = "store-busy"
    retryable = True


class AgentStoreError(AgentError):
    """A storage failure that is not a concurrency conflict (unreachable, corrupt, refused)."""

    code = "store-error"


class ProviderError(AgentError):
    """A model provider's call failed after the SDK's own retries (429, 5xx, timeouts), or answered
    with something that is not a valid response. `status` is the HTTP status when there was one,
    `provider_request_id` the provider's id for the failed call. Its message and cause chain are
    scrubbed of the client's credentials before it is raised, so journaling it leaks none."""

    code = "provider-error"
    status: int | None = None
    provider_request_id: str | None = None
