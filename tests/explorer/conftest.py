"""Fixtures for the explorer's Python-side tests: the sample machine and its recorded runs (real engine)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from sample_run import make_machine, sample_run


@pytest.fixture(scope="session")
def machine() -> Any:
    return make_machine()


@pytest.fixture
def entries(machine: Any) -> list[dict[str, Any]]:
    return sample_run(machine)
