"""Twin of history_shallow_no_default.mjs: history without a target falls back to `initial`."""

from typing import Any

from agent_explorer.engine import setup


def build() -> Any:
    return setup(actions={"enterB": lambda c, e, p: None}).create_machine(
        {
            "id": "tabs",
            "initial": "panel",
            "states": {
                "panel": {
                    "initial": "a",
                    "states": {
                        "a": {"on": {"NEXT": "b"}},
                        "b": {"entry": "enterB", "on": {"NEXT": "c"}},
                        "c": {},
                        "last": {"type": "history"},
                    },
                    "on": {"CLOSE": "closed"},
                },
                "closed": {"on": {"REOPEN": "panel.last", "FRESH": "panel"}},
            },
        }
    )
