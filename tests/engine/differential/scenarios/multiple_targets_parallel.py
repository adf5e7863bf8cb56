"""Twin of multiple_targets_parallel.mjs: `target: [...]` into regions; a list is candidates."""

from typing import Any

from agent_explorer.engine import setup


def build() -> Any:
    noop = lambda c, e, p: None
    return setup(actions={"inA2": noop, "inB3": noop, "outPar": noop}).create_machine(
        {
            "id": "multi",
            "initial": "idle",
            "states": {
                "idle": {
                    "on": {
                        "JUMP": {"target": ["#multi.par.a.a2", "#multi.par.b.b3"]},
                        "CANDIDATES": ["#multi.par.b.b3", "#multi.par.a.a2"],
                        "ENTER": "par",
                    },
                },
                "par": {
                    "type": "parallel",
                    "exit": "outPar",
                    "on": {
                        "RESET_BOTH": {"target": [".a.a1", ".b.b1"]},
                        "LEAVE": "idle",
                    },
                    "states": {
                        "a": {
                            "initial": "a1",
                            "states": {"a1": {}, "a2": {"entry": "inA2"}},
                        },
                        "b": {
                            "initial": "b1",
                            "states": {
                                "b1": {
                                    "on": {
                                        "SHIFT": {
                                            "target": [
                                                "#multi.par.a.a2",
                                                "#multi.par.b.b2",
                                            ]
                                        }
                                    }
                                },
                                "b2": {},
                                "b3": {"entry": "inB3"},
                            },
                        },
                    },
                },
            },
        }
    )
