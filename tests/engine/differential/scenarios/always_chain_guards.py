"""Twin of always_chain_guards.mjs: eventless transitions looping to a fixed point."""

from typing import Any

from agent_explorer.engine import assign, setup


def build() -> Any:
    return setup(
        guards={
            "belowLimit": lambda c, e, p: c["n"] < c["limit"],
            "reachedLimit": lambda c, e, p: c["n"] >= c["limit"],
        },
        actions={"passed": lambda c, e, p: None},
    ).create_machine(
        {
            "id": "pump",
            "context": lambda input: {"n": 0, "limit": input["limit"], "visits": 0},
            "initial": "idle",
            "states": {
                "idle": {
                    "on": {
                        "START": "counting",
                        "LIMIT": {
                            "actions": assign({"limit": lambda c, e, p: e["limit"]})
                        },
                    },
                },
                "counting": {
                    "entry": assign({"visits": lambda c, e, p: c["visits"] + 1}),
                    "always": [
                        {"guard": "reachedLimit", "target": "checked"},
                        {"guard": "belowLimit", "target": "bump"},
                    ],
                },
                "bump": {
                    "entry": [assign({"n": lambda c, e, p: c["n"] + 1}), "passed"],
                    "always": "counting",
                },
                "checked": {
                    "always": {
                        "target": "idle",
                        "guard": lambda c, e, p: c["n"] > 100,
                        "actions": "passed",
                    },
                    "on": {"RESET": {"target": "idle", "actions": assign({"n": 0})}},
                },
            },
        }
    )
