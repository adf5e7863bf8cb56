"""Twin of assign_per_key_and_whole.mjs: per-key and whole-function assign, in sequence."""

from typing import Any

from agent_explorer.engine import assign, setup


def build() -> Any:
    return setup(
        actions={
            "addItem": assign(
                {
                    "items": lambda c, e, p: [*c["items"], e["item"]],
                    "count": lambda c, e, p: c["count"] + 1,
                }
            ),
            "rename": assign(lambda c, e, p: {"name": f"{e['name']}#{c['count']}"}),
            "bump": assign({"count": lambda c, e, p: c["count"] + p["by"]}),
        },
    ).create_machine(
        {
            "id": "cart",
            "context": {
                "items": [],
                "count": 0,
                "name": "cart",
                "meta": {"nested": {"ok": True}},
            },
            "initial": "open",
            "states": {
                "open": {
                    "on": {
                        "ADD": {"actions": "addItem"},
                        "RENAME": {
                            "actions": [
                                "rename",
                                {"type": "bump", "params": {"by": 10}},
                                "rename",
                            ]
                        },
                        "CLEAR": {"actions": assign({"items": [], "count": 0})},
                        "META": {
                            "actions": assign(
                                {
                                    "meta": lambda c, e, p: {
                                        **c["meta"],
                                        "touched": c["count"],
                                    }
                                }
                            )
                        },
                    },
                },
            },
        }
    )
