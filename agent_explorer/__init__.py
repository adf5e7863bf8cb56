"""agent_explorer: open, scrub, verify and rewrite recorded runs of statechart-driven agents."""

from __future__ import annotations

from .errors import (
    AgentError,
    AgentEventLogConflictError,
    AgentInvalidEventPayloadError,
    AgentLogFormatError,
    AgentMachineVersionMismatchError,
    AgentReplayDivergenceError,
    AgentSnapshotDivergedError,
    NonSerializableAgentEventError,
)

__version__ = "0.1.0"

__all__ = [
    "AgentError",
    "AgentEventLogConflictError",
    "AgentInvalidEventPayloadError",
    "AgentLogFormatError",
    "AgentMachineVersionMismatchError",
    "AgentReplayDivergenceError",
    "AgentSnapshotDivergedError",
    "NonSerializableAgentEventError",
]
