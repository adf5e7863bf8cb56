"""Twin of context_from_input.mjs: the context factory receives the input."""

from typing import Any

from agent_explorer.engine import assign, setup


def build() -> Any:
    return setup().create_machine(
        {
            "id": "profile",
            "context": lambda input: {
                "name": input["name"],
                "tags": [*input["tags"], "new"],
                "limits": {"max": input.get("max", 10)},
                "ratio": input["ratio"],
            },
            "initial": "view",
            "states": {
                "view": {
                    "on": {
                        "RENAME": {
                            "actions": assign({"name": lambda c, e, p: e["name"]})
                        }
                    }
                },
            },
        }
    )
