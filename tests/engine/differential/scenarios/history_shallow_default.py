"""Twin of history_shallow_default.mjs: shallow history with a default target."""

from typing import Any

from agent_explorer.engine import setup


def build() -> Any:
    return setup().create_machine(
        {
            "id": "player",
            "initial": "off",
            "states": {
                "off": {"on": {"POWER": "on.hist", "POWER_PLAIN": "on"}},
                "on": {
                    "initial": "idle",
                    "on": {"POWER": "off"},
                    "states": {
                        "idle": {"on": {"PLAY": "playing"}},
                        "playing": {
                            "initial": "normal",
                            "on": {"PAUSE": "paused"},
                            "states": {"normal": {"on": {"FAST": "fast"}}, "fast": {}},
                        },
                        "paused": {"on": {"PLAY": "playing"}},
                        "hist": {
                            "type": "history",
                            "history": "shallow",
                            "target": "paused",
                        },
                    },
                },
            },
        }
    )
