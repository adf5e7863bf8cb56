"""Shared pieces of the samples tests: where the committed samples live, and one fresh regeneration per session.

The fresh regeneration writes the long inbox run with only `SMALL_TICKETS` tickets, so the default suite stays
fast; the committed long run must start with exactly those entries (the full check is `slow`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_explorer.samples.regenerate import regenerate

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "sample_logs"
SMALL_TICKETS = 300


@pytest.fixture(scope="session")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sample_logs")
    asyncio.run(regenerate(out, tickets=SMALL_TICKETS, log=lambda _: None))
    return out
