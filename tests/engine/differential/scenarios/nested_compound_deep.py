"""Twin of nested_compound_deep.mjs: a cross-branch transition three levels deep."""

from typing import Any

from agent_explorer.engine import setup

STATES = ["A", "A1", "A1x", "A1y", "A2", "B", "B1", "B1x"]


def build() -> Any:
    actions = {f"{d}{s}": (lambda c, e, p: None) for s in STATES for d in ("in", "out")}
    return setup(actions=actions).create_machine(
        {
            "id": "deep",
            "initial": "A",
            "states": {
                "A": {
                    "entry": "inA",
                    "exit": "outA",
                    "initial": "A1",
                    "states": {
                        "A1": {
                            "entry": "inA1",
                            "exit": "outA1",
                            "initial": "A1x",
                            "states": {
                                "A1x": {
                                    "entry": "inA1x",
                                    "exit": "outA1x",
                                    "on": {"SIDE": "A1y"},
                                },
                                "A1y": {
                                    "entry": "inA1y",
                                    "exit": "outA1y",
                                    "on": {"CROSS": "#deep.B.B1.B1x"},
                                },
                            },
                            "on": {"SIBLING": "A2"},
                        },
                        "A2": {"entry": "inA2", "exit": "outA2"},
                    },
                },
                "B": {
                    "entry": "inB",
                    "exit": "outB",
                    "initial": "B1",
                    "states": {
                        "B1": {
                            "entry": "inB1",
                            "exit": "outB1",
                            "initial": "B1x",
                            "states": {"B1x": {"entry": "inB1x", "exit": "outB1x"}},
                        },
                    },
                    "on": {"HOME": "A"},
                },
            },
        }
    )
