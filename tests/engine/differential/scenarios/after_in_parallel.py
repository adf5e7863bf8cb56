"""Twin of after_in_parallel.mjs: timers per region; cancel only what is left; stale timers."""

from typing import Any

from agent_explorer.engine import assign, setup


def build() -> Any:
    return setup().create_machine(
        {
            "id": "timers",
            "context": {"fired": []},
            "type": "parallel",
            "states": {
                "blink": {
                    "initial": "on",
                    "states": {
                        "on": {
                            "after": {
                                500: {
                                    "target": "off",
                                    "actions": assign(
                                        {
                                            "fired": lambda c, e, p: [
                                                *c["fired"],
                                                "blink off",
                                            ]
                                        }
                                    ),
                                }
                            }
                        },
                        "off": {"after": {500: "on"}, "on": {"FREEZE": "frozen"}},
                        "frozen": {"on": {"THAW": "on"}},
                    },
                },
                "session": {
                    "initial": "active",
                    "states": {
                        "active": {
                            "after": {60000: "expired"},
                            "on": {"TOUCH": {"target": "active", "reenter": True}},
                        },
                        "expired": {"type": "final"},
                    },
                },
            },
        }
    )
