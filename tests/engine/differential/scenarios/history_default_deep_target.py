"""Twin of history_default_deep_target.mjs: history defaults pointing deep (`b.b2`)."""

from typing import Any

from agent_explorer.engine import setup


def build() -> Any:
    return setup().create_machine(
        {
            "id": "hd",
            "initial": "out",
            "states": {
                "out": {"on": {"IN_SHALLOW": "box.hs", "IN_DEEP": "box.hd"}},
                "box": {
                    "initial": "a",
                    "on": {"OUT": "out"},
                    "states": {
                        "a": {"on": {"B": "b"}},
                        "b": {
                            "initial": "b1",
                            "states": {
                                "b1": {"on": {"N": "b2"}},
                                "b2": {"on": {"N": "b3"}},
                                "b3": {},
                            },
                        },
                        "hs": {"type": "history", "target": "b.b2"},
                        "hd": {"type": "history", "history": "deep", "target": "b.b3"},
                    },
                },
            },
        }
    )
