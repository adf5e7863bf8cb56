"""Suite-wide ordering (the real-browser tests run last) and the generated sample logs, written once per session.

Playwright's sync API keeps an event loop running on the main thread while its browser is open (a
session fixture); anything async that ran after it would find a loop already running. Running the
browser tests last keeps them apart from the unit tests, as the browser never shares a process phase
with code that needs a clean main thread.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_explorer.samples import ensure_samples

SAMPLE_LOGS = Path(__file__).resolve().parents[1] / "sample_logs"


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)


@pytest.fixture(scope="session")
def sample_logs() -> Path:
    """The checkout's sample_logs/ with its generated files (the long run, samples.db) present and current.

    They are not committed: `ensure_samples` writes them on first use (a few seconds) and is a no-op afterwards.
    """
    return ensure_samples(SAMPLE_LOGS)
