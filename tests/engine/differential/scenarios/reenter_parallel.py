"""Twin of reenter_parallel.mjs: self-transitions on a parallel state, default and reenter."""

from typing import Any

from agent_explorer.engine import assign, setup


def count(key: str) -> Any:
    return assign({key: lambda c, e, p: c[key] + 1})


def build() -> Any:
    return setup().create_machine(
        {
            "id": "rp",
            "context": {"enter": 0, "exit": 0, "regionEnter": 0},
            "initial": "par",
            "states": {
                "par": {
                    "type": "parallel",
                    "entry": count("enter"),
                    "exit": count("exit"),
                    "on": {
                        "SELF": {"target": "par"},
                        "SELF_REENTER": {"target": "par", "reenter": True},
                        "NOTHING": {"actions": count("regionEnter")},
                    },
                    "states": {
                        "a": {
                            "initial": "a1",
                            "entry": count("regionEnter"),
                            "states": {"a1": {"on": {"A": "a2"}}, "a2": {}},
                        },
                        "b": {
                            "initial": "b1",
                            "states": {"b1": {"on": {"B": "b2"}}, "b2": {}},
                        },
                    },
                },
            },
        }
    )
