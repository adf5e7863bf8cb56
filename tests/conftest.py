"""Suite-wide ordering: the real-browser tests run last.

Playwright's sync API keeps an event loop running on the main thread while its browser is open (a
session fixture); anything async that ran after it would find a loop already running. Running the
browser tests last keeps them apart from the unit tests, as the browser never shares a process phase
with code that needs a clean main thread.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)
