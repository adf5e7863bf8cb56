"""Twin of guards_state_in.mjs: state_in by '#id' and by state value, across regions."""

from typing import Any

from agent_explorer.engine import not_, setup, state_in


def build() -> Any:
    return setup().create_machine(
        {
            "id": "car",
            "type": "parallel",
            "states": {
                "engine": {
                    "initial": "off",
                    "states": {
                        "off": {"on": {"START": "on"}},
                        "on": {
                            "id": "engineOn",
                            "on": {
                                "STOP": {
                                    "target": "off",
                                    "guard": state_in({"gear": "park"}),
                                }
                            },
                        },
                    },
                },
                "gear": {
                    "initial": "park",
                    "states": {
                        "park": {
                            "on": {
                                "DRIVE": {
                                    "target": "drive",
                                    "guard": state_in("#engineOn"),
                                }
                            }
                        },
                        "drive": {
                            "on": {
                                "PARK": "park",
                                "REVERSE": {
                                    "target": "reverse",
                                    "guard": not_(state_in("#car.engine.off")),
                                },
                            }
                        },
                        "reverse": {"on": {"PARK": "park"}},
                    },
                },
            },
        }
    )
