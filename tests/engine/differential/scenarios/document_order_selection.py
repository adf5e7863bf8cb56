"""Twin of document_order_selection.mjs: the first candidate whose guard passes wins."""

from typing import Any

from agent_explorer.engine import assign, setup


def build() -> Any:
    return setup(
        guards={
            "isBig": lambda c, e, p: e["n"] > 100,
            "isMedium": lambda c, e, p: e["n"] > 10,
        },
    ).create_machine(
        {
            "id": "sort",
            "context": {"last": None},
            "initial": "waiting",
            "states": {
                "waiting": {
                    "on": {
                        "NUM": [
                            {
                                "guard": "isBig",
                                "target": "big",
                                "actions": assign({"last": "big"}),
                            },
                            {
                                "guard": "isMedium",
                                "target": "medium",
                                "actions": assign({"last": "medium"}),
                            },
                            {"target": "small", "actions": assign({"last": "small"})},
                        ],
                    },
                },
                "big": {"on": {"BACK": "waiting"}},
                "medium": {"on": {"BACK": "waiting"}},
                "small": {"on": {"BACK": "waiting"}},
            },
        }
    )
