"""Twin of final_toplevel_output.mjs: top-level final -> status done, machine output."""

from typing import Any

from agent_explorer.engine import assign, setup


def build() -> Any:
    return setup().create_machine(
        {
            "id": "quiz",
            "context": lambda input: {"score": 0, "max": input["max"]},
            "initial": "asking",
            "states": {
                "asking": {
                    "on": {
                        "RIGHT": {
                            "actions": assign({"score": lambda c, e, p: c["score"] + 1})
                        },
                        "WRONG": {},
                        "END": "over",
                    },
                },
                "over": {
                    "type": "final",
                    "output": lambda c, e, p: {"finalScore": c["score"]},
                },
            },
            "output": lambda c, e, p: {
                "score": c["score"],
                "of": c["max"],
                "last": e["type"],
            },
        }
    )
