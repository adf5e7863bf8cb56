"""Twin of wildcard_prefix.mjs: `prefix.*` descriptors against exact ones, across depths."""

from typing import Any

from agent_explorer.engine import assign, setup


def note(tag: str) -> Any:
    return assign({"log": lambda c, e, p: [*c["log"], f"{tag}:{e['type']}"]})


def build() -> Any:
    return setup().create_machine(
        {
            "id": "feed",
            "context": {"log": []},
            "initial": "on",
            "states": {
                "on": {
                    "initial": "inner",
                    "states": {
                        "inner": {
                            "on": {
                                "mouse.*": {"actions": note("inner mouse.*")},
                                "key.down": {"actions": note("inner key.down")},
                            },
                        },
                    },
                    "on": {
                        "key.*": {"actions": note("on key.*")},
                        "mouse.click": {"actions": note("on mouse.click")},
                        "net.*": {"target": "offline", "actions": note("on net.*")},
                    },
                },
                "offline": {"on": {"net.up": "on"}},
            },
        }
    )
