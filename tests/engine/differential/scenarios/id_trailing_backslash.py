"""Twin of id_trailing_backslash.mjs: a trailing backslash in a target reads as "undefined"."""

from typing import Any

from agent_explorer.engine import setup


def build() -> Any:
    return setup().create_machine(
        {
            "id": "m",
            "initial": "a",
            "states": {
                "a": {"on": {"BY_ID": "#some\\", "BY_KEY": "b\\"}},
                "x": {"id": "someundefined", "on": {"BACK": "a"}},
                "y": {"id": "some\\", "on": {"BACK": "a"}},
                "bundefined": {"on": {"BACK": "a"}},
                "b\\": {"on": {"BACK": "a"}},
            },
        }
    )
