"""Twin of tags_matches_can.mjs: tags from all active nodes, matches on parallel values, can."""

from typing import Any

from agent_explorer.engine import assign, setup


def build() -> Any:
    return setup(guards={"hasItems": lambda c, e, p: c["items"] > 0}).create_machine(
        {
            "id": "shop",
            "context": {"items": 0},
            "initial": "browsing",
            "tags": ["app"],
            "states": {
                "browsing": {
                    "tags": ["public"],
                    "on": {
                        "ADD": {
                            "actions": assign({"items": lambda c, e, p: c["items"] + 1})
                        },
                        "CHECKOUT": {"guard": "hasItems", "target": "checkout"},
                    },
                },
                "checkout": {
                    "type": "parallel",
                    "tags": ["busy", "secure"],
                    "states": {
                        "payment": {
                            "initial": "card",
                            "states": {
                                "card": {
                                    "tags": ["card", "busy"],
                                    "on": {"PAID": "paid"},
                                },
                                "paid": {"type": "final"},
                            },
                        },
                        "shipping": {
                            "initial": "address",
                            "states": {
                                "address": {"on": {"SHIPPED": "set"}},
                                "set": {"tags": "shipped", "type": "final"},
                            },
                        },
                    },
                    "onDone": "thanks",
                },
                "thanks": {"type": "final", "tags": ["public", "done"]},
            },
        }
    )
