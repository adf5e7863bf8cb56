"""The public surface is the contract of docs/api.md: every name it shows importable from the top level.

The list is read from the repository's own docs/api.md, so a name added to the contract fails here until it is
exported. The pinned set below is the floor: a name in it stays exported even if the document loses it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import agent_explorer

API_MD = Path(__file__).resolve().parents[1] / "docs" / "api.md"

PINNED = {
    # §1 engine
    "setup", "create_machine", "assign", "raise_", "send_to", "emit", "cancel", "log", "spawn_child",
    "stop_child", "from_promise", "and_", "or_", "not_", "state_in", "initial_transition", "transition",
    # §2 log
    "init_entry", "create_replay_entry", "replay", "verify_log", "compare_machines", "diff_snapshots",
    "Timeline", "fork_event_log", "get_usage_from_events", "get_log_execution_id",
    "assert_json_serializable", "assert_agent_log_entry", "state_hash", "read_log", "write_log",
    # §3 stores
    "create_in_memory_event_log_store", "SqliteEventLogStore", "PostgresEventLogStore",
    "assert_event_log_store_conformance",
    # §4 runtime
    "setup_agent", "create_text_logic", "create_decision_logic", "ScriptedModel", "run_agent",
    "parse_agent_event",
    # §5 errors
    "AgentError", "AgentEventLogConflictError", "AgentReplayDivergenceError",
    "AgentMachineVersionMismatchError", "AgentSnapshotDivergedError", "AgentInvalidEventPayloadError",
    "NonSerializableAgentEventError", "AgentLogFormatError",
    # §6 explorer
    "Explorer",
}


def names_in_api_md(text: str) -> set[str]:
    """Names in `from agent_explorer import (...)` blocks, store constructors, and the errors section."""
    names: set[str] = set()
    blocks = re.findall(r"from agent_explorer import \(([^)]*)\)", text)
    blocks += re.findall(r"from agent_explorer import ([^(\n]+)\n", text)
    for block in blocks:
        names.update(n.strip() for n in block.replace("\n", ",").split(",") if n.strip().isidentifier())
    names.update(re.findall(r"\b(create_in_memory_event_log_store|\w+EventLogStore)\(", text))
    names.update(re.findall(r"\bawait (assert_event_log_store_conformance)\(", text))
    errors = text.split("## 5. Errors", 1)[1].split("## 6.", 1)[0]
    names.update(re.findall(r"`(\w*Error)`", errors))
    return names


def contract() -> set[str]:
    return names_in_api_md(API_MD.read_text(encoding="utf-8")) | PINNED


@pytest.mark.parametrize("name", sorted(contract()))
def test_public_name_is_exported(name: str) -> None:
    assert hasattr(agent_explorer, name), f"agent_explorer.{name} (docs/api.md) is not exported"
    assert name in agent_explorer.__all__, f"{name} is exported but missing from __all__"


def test_all_names_resolve() -> None:
    missing = [n for n in agent_explorer.__all__ if not hasattr(agent_explorer, n)]
    assert not missing, f"__all__ names that do not resolve: {missing}"


def test_api_md_parser_finds_the_contract() -> None:
    found = names_in_api_md(API_MD.read_text(encoding="utf-8"))
    assert PINNED <= found | {"Explorer", "SqliteEventLogStore", "PostgresEventLogStore"}, PINNED - found


def test_errors_carry_stable_codes() -> None:
    codes = {
        "AgentEventLogConflictError": "event-log-conflict",
        "AgentSnapshotDivergedError": "snapshot-diverged",
        "AgentInvalidEventPayloadError": "invalid-event-payload",
        "AgentLogFormatError": "log-format",
    }
    for name, code in codes.items():
        cls = getattr(agent_explorer, name)
        assert cls.code == code
        assert issubclass(cls, agent_explorer.AgentError)


def test_every_plain_error_code_is_documented_in_the_errors_module() -> None:
    """A code raised anywhere in the package appears in errors.py's docstring, so users can match on it."""
    import agent_explorer.errors as errors_module

    package = Path(agent_explorer.__file__).parent
    raised = set()
    for path in package.rglob("*.py"):
        raised.update(re.findall(r'code="([a-z0-9-]+)"', path.read_text(encoding="utf-8")))
    documented = set(re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)+|[a-z]+", errors_module.__doc__ or ""))
    missing = sorted(code for code in raised if code not in documented)
    assert not missing, f"codes raised but not listed in agent_explorer/errors.py: {missing}"
