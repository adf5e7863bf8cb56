"""Twin of atomic_basic.mjs: atomic states, sibling targets, an unknown event, plain-object context."""

from typing import Any

from agent_explorer.engine import setup


def build() -> Any:
    return setup(
        actions={"onGreen": lambda c, e, p: None, "onRed": lambda c, e, p: None},
    ).create_machine(
        {
            "id": "light",
            "context": {"cycles": 0},
            "initial": "green",
            "states": {
                "green": {"entry": "onGreen", "on": {"NEXT": "yellow"}},
                "yellow": {"on": {"NEXT": "red", "BACK": "green"}},
                "red": {"entry": "onRed", "on": {"NEXT": "green"}},
            },
        }
    )
