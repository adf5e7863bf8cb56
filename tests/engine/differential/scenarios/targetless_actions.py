"""Twin of targetless_actions.mjs: targetless transitions run actions, exit and enter nothing."""

from typing import Any

from agent_explorer.engine import assign, setup


def build() -> Any:
    noop = lambda c, e, p: None
    return setup(
        actions={"onEnter": noop, "onExit": noop, "tally": noop}
    ).create_machine(
        {
            "id": "counter",
            "context": {"count": 0},
            "initial": "active",
            "states": {
                "active": {
                    "entry": "onEnter",
                    "exit": "onExit",
                    "initial": "inner",
                    "states": {
                        "inner": {
                            "on": {
                                "INNER": {
                                    "actions": [
                                        assign(
                                            {"count": lambda c, e, p: c["count"] + 100}
                                        ),
                                        "tally",
                                    ]
                                }
                            }
                        }
                    },
                    "on": {
                        "INC": {
                            "actions": [
                                assign({"count": lambda c, e, p: c["count"] + 1}),
                                "tally",
                            ]
                        },
                        "DEC": {
                            "actions": assign({"count": lambda c, e, p: c["count"] - 1})
                        },
                        "SET": {
                            "actions": assign({"count": lambda c, e, p: e["value"]})
                        },
                    },
                },
            },
        }
    )
