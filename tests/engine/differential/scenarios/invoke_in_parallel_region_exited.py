"""Twin of invoke_in_parallel_region_exited.mjs: a region leaves its invoking state, then the
stopped child's completion arrives; the other region's completion is live."""

import json
from typing import Any

from agent_explorer.engine import assign, from_promise, setup


async def fetch_a(input: Any) -> str:
    return "A"


async def fetch_b(input: Any) -> str:
    return "B"


def push(tag: str) -> Any:
    def entry(c: Any, e: Any, p: Any) -> list[str]:
        output = json.dumps(e.get("output"), separators=(",", ":"), ensure_ascii=False)
        return [*c["log"], f"{tag}:{output}"]

    return assign({"log": entry})


def build() -> Any:
    return setup(
        actors={"fetchA": from_promise(fetch_a), "fetchB": from_promise(fetch_b)}
    ).create_machine(
        {
            "id": "dual",
            "context": {"log": []},
            "initial": "loading",
            "states": {
                "loading": {
                    "type": "parallel",
                    "states": {
                        "left": {
                            "initial": "busy",
                            "states": {
                                "busy": {
                                    "invoke": {
                                        "id": "left",
                                        "src": "fetchA",
                                        "input": {"side": "left"},
                                        "onDone": {
                                            "target": "done",
                                            "actions": push("left done"),
                                        },
                                    },
                                    "on": {"SKIP_LEFT": "skipped"},
                                },
                                "skipped": {},
                                "done": {"type": "final"},
                            },
                        },
                        "right": {
                            "initial": "busy",
                            "states": {
                                "busy": {
                                    "invoke": {
                                        "id": "right",
                                        "src": "fetchB",
                                        "input": {"side": "right"},
                                        "onDone": {
                                            "target": "done",
                                            "actions": push("right done"),
                                        },
                                    },
                                },
                                "done": {"type": "final"},
                            },
                        },
                    },
                    "onDone": {"target": "complete", "actions": push("all done")},
                },
                "complete": {},
            },
            "on": {"RESET": {"target": ".loading", "actions": push("reset")}},
        }
    )
