"""Twin of reenter_true_vs_default.mjs: self and child targets with and without `reenter`."""

from typing import Any

from agent_explorer.engine import assign, setup


def build() -> Any:
    noop = lambda c, e, p: None
    return setup(
        actions={
            "enterBox": assign({"entered": lambda c, e, p: c["entered"] + 1}),
            "exitBox": assign({"exited": lambda c, e, p: c["exited"] + 1}),
            "markEnter": noop,
            "markExit": noop,
        },
    ).create_machine(
        {
            "id": "box",
            "context": {"entered": 0, "exited": 0},
            "initial": "box",
            "states": {
                "box": {
                    "entry": ["enterBox", "markEnter"],
                    "exit": ["exitBox", "markExit"],
                    "initial": "one",
                    "states": {
                        "one": {"entry": "markEnter", "exit": "markExit"},
                        "two": {},
                    },
                    "on": {
                        "SELF": {"target": "box"},
                        "SELF_REENTER": {"target": "box", "reenter": True},
                        "CHILD_TWO": {"target": ".two"},
                        "CHILD_TWO_REENTER": {"target": ".two", "reenter": True},
                        "CHILD_ONE": {"target": ".one"},
                        "STAY": {"actions": "markEnter"},
                    },
                },
            },
        }
    )
