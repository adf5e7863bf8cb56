"""A stand-in for agent_explorer.log.entries, used only while the real module has not landed.

It checks the wire-format keys of API.md §2 so the stores' validation path can be exercised; once the
real module exists, conftest never loads this file.
"""

from __future__ import annotations

import re
from typing import Any

from agent_explorer.errors import AgentLogFormatError
from agent_explorer.log.jsonvalue import assert_json_serializable

_HASH = re.compile(r"^[0-9a-f]{64}$")


def assert_agent_log_entry(entry: Any, *, index: int | None = None) -> None:
    where = f"entry {index}" if index is not None else "entry"
    if not isinstance(entry, dict):
        raise AgentLogFormatError(f"{where} is not an object", index=index)
    assert_json_serializable(entry, "entry")
    if entry.get("schemaVersion") != 1:
        raise AgentLogFormatError(f"{where}: schemaVersion must be 1", index=index)
    for key in ("id", "recordedAt", "machineId", "machineVersion"):
        if not isinstance(entry.get(key), str):
            raise AgentLogFormatError(f"{where}: {key} must be a string", index=index)
    if not isinstance(entry.get("index"), int) or isinstance(entry.get("index"), bool):
        raise AgentLogFormatError(f"{where}: index must be an int", index=index)
    event = entry.get("event")
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise AgentLogFormatError(f"{where}: event must be an object with a string type", index=index)
    verification = entry.get("verification")
    if verification is not None and not (isinstance(verification, dict) and _HASH.match(str(verification.get("stateHash")))):
        raise AgentLogFormatError(f"{where}: verification.stateHash must be 64 hex digits", index=index)
