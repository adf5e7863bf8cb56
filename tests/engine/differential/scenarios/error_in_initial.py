"""Twin of error_in_initial.mjs: an exception in an entry action -> status error, not a raise."""

from typing import Any

from agent_explorer.engine import assign, setup


def explode(context: Any, event: Any, params: Any) -> Any:
    raise RuntimeError("boom at entry")


def build() -> Any:
    return setup().create_machine(
        {
            "id": "broken",
            "context": {"n": 0},
            "initial": "start",
            "states": {
                "start": {
                    "entry": [assign({"n": 1}), assign(explode)],
                    "on": {
                        "NEXT": {
                            "target": "next",
                            "actions": assign({"n": lambda c, e, p: c["n"] + 1}),
                        }
                    },
                },
                "next": {},
            },
        }
    )
