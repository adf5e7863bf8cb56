"""Fixtures for the replay tests: the shared agent machine and a recorded conversation."""

from __future__ import annotations

from typing import Any

import pytest

from .machines import agent_machine, conversation, record


@pytest.fixture
def machine() -> Any:
    return agent_machine()


@pytest.fixture
def events() -> list[dict[str, Any]]:
    return conversation(6)


@pytest.fixture
def log(machine: Any, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return record(machine, events, input={"question": "hello"})
