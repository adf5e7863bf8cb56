"""Twin of wildcard_order.mjs: wildcards declared before exact descriptors; guard fall-through."""

from typing import Any

from agent_explorer.engine import assign, setup


def note(tag: str) -> Any:
    return assign({"log": lambda c, e, p: [*c["log"], f"{tag}:{e['type']}"]})


def build() -> Any:
    return setup().create_machine(
        {
            "id": "order",
            "context": {"log": []},
            "initial": "s",
            "states": {
                "s": {
                    "on": {
                        "*": {"actions": note("star")},
                        "a.*": {"actions": note("a.*")},
                        "a.b.*": {"actions": note("a.b.*")},
                        "a.b": {"actions": note("exact a.b")},
                        "X": [
                            {
                                "guard": lambda c, e, p: e["ok"] is True,
                                "actions": note("X ok"),
                            }
                        ],
                    },
                },
            },
        }
    )
