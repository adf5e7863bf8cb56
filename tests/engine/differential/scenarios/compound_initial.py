"""Twin of compound_initial.mjs: `initial` children; entry outer-in, exit inner-out."""

from typing import Any

from agent_explorer.engine import setup

NAMES = [
    "enterOff",
    "exitOff",
    "enterOn",
    "exitOn",
    "enterLow",
    "exitLow",
    "enterHigh",
    "exitHigh",
]


def build() -> Any:
    return setup(
        actions={name: (lambda c, e, p: None) for name in NAMES}
    ).create_machine(
        {
            "id": "lamp",
            "initial": "off",
            "states": {
                "off": {"entry": "enterOff", "exit": "exitOff", "on": {"TOGGLE": "on"}},
                "on": {
                    "entry": "enterOn",
                    "exit": "exitOn",
                    "initial": "low",
                    "on": {"TOGGLE": "off"},
                    "states": {
                        "low": {
                            "entry": "enterLow",
                            "exit": "exitLow",
                            "on": {"UP": "high"},
                        },
                        "high": {
                            "entry": "enterHigh",
                            "exit": "exitHigh",
                            "on": {"DOWN": "low"},
                        },
                    },
                },
            },
        }
    )
