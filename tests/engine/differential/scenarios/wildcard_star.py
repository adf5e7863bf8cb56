"""Twin of wildcard_star.mjs: `*` matches any event; explicit descriptors win over it."""

from typing import Any

from agent_explorer.engine import assign, setup


def build() -> Any:
    return setup().create_machine(
        {
            "id": "catchall",
            "context": {"caught": [], "explicit": 0},
            "initial": "listening",
            "states": {
                "listening": {
                    "on": {
                        "KNOWN": {
                            "actions": assign(
                                {"explicit": lambda c, e, p: c["explicit"] + 1}
                            )
                        },
                        "*": {
                            "actions": assign(
                                {"caught": lambda c, e, p: [*c["caught"], e["type"]]}
                            )
                        },
                        "QUIT": "quit",
                    },
                },
                "quit": {"on": {"*": "listening"}},
            },
        }
    )
