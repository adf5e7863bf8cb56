"""Twin of parallel_two_regions.mjs: two independent regions and events both regions handle."""

from typing import Any

from agent_explorer.engine import setup


def build() -> Any:
    noop = lambda c, e, p: None
    names = ["boldOn", "boldOff", "listOn", "listOff", "enterEditor"]
    return setup(actions={n: noop for n in names}).create_machine(
        {
            "id": "editor",
            "type": "parallel",
            "entry": "enterEditor",
            "states": {
                "bold": {
                    "initial": "off",
                    "states": {
                        "off": {"on": {"BOLD": "on", "RESET": "off"}},
                        "on": {
                            "entry": "boldOn",
                            "exit": "boldOff",
                            "on": {"BOLD": "off", "RESET": "off"},
                        },
                    },
                },
                "list": {
                    "initial": "none",
                    "states": {
                        "none": {"on": {"BULLETS": "bullets", "NUMBERS": "numbers"}},
                        "bullets": {
                            "entry": "listOn",
                            "exit": "listOff",
                            "on": {
                                "NONE": "none",
                                "NUMBERS": "numbers",
                                "RESET": "none",
                            },
                        },
                        "numbers": {
                            "entry": "listOn",
                            "exit": "listOff",
                            "on": {
                                "NONE": "none",
                                "BULLETS": "bullets",
                                "RESET": "none",
                            },
                        },
                    },
                },
            },
        }
    )
