"""Machines the fleet tests replay; importable by worker processes (they import them by `module:attr`)."""

from __future__ import annotations

import multiprocessing
import os
import signal
from pathlib import Path
from typing import Any

from agent_explorer import assign, setup


def _crash_once(context: dict[str, Any], event: dict[str, Any], params: Any) -> bool:
    """The first worker process to fold a CRASH event kills itself (SIGKILL) mid-batch; every later fold
    (the rescheduled task, the parent's own) finds the marker and goes on. Never kills the test process."""
    marker = Path(str(event.get("marker", "")))
    if multiprocessing.parent_process() is not None and event.get("marker") and not marker.exists():
        marker.write_text(str(os.getpid()), encoding="utf-8")
        os.kill(os.getpid(), signal.SIGKILL)
    return True


def _counter(version: str, limit: int) -> Any:
    return setup(
        guards={
            "small": (lambda context, event, params: context["count"] < limit),
            "crashOnce": _crash_once,
        },
    ).create_machine({
        "id": "fleet_counter",
        "version": version,
        "context": {"count": 0},
        "initial": "counting",
        "states": {
            "counting": {
                "on": {
                    "INC": {"guard": "small",
                            "actions": assign({"count": lambda context, event, params: context["count"] + 1})},
                    "CRASH": {"guard": "crashOnce",
                              "actions": assign({"count": lambda context, event, params: context["count"] + 1})},
                    "STOP": "stopped",
                },
            },
            "stopped": {"type": "final"},
        },
    })


counter = _counter(os.environ.get("FLEET_TEST_COUNTER_VERSION", "1"), 5)
"""The machine under test (a worker started with FLEET_TEST_COUNTER_VERSION set runs "other code")."""

counter_v2 = _counter("2", 3)
"""The next version of `counter`: a tighter guard, so logs with more than 3 INCs derive another state."""

other = setup().create_machine({
    "id": "fleet_other",
    "version": "1",
    "initial": "idle",
    "states": {"idle": {"on": {"GO": "gone"}}, "gone": {"type": "final"}},
})
"""Another machine id: its threads are skipped when `counter` verifies the store."""

__all__ = ["counter", "counter_v2", "other"]
