"""Twin of initial_final_immediately.mjs: done during the initial macrostep, with output."""

from typing import Any

from agent_explorer.engine import assign, setup


def build() -> Any:
    return setup().create_machine(
        {
            "id": "instant",
            "context": lambda input: {"n": input["n"]},
            "initial": "check",
            "states": {
                "check": {
                    "always": [
                        {
                            "guard": lambda c, e, p: c["n"] > 0,
                            "target": "positive",
                            "actions": assign({"n": lambda c, e, p: c["n"] * 10}),
                        },
                        {"target": "nonPositive"},
                    ],
                },
                "positive": {"type": "final"},
                "nonPositive": {"on": {"RETRY": "check"}},
            },
            "output": lambda c, e, p: {"n": c["n"], "via": e["type"]},
        }
    )
