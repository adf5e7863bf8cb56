"""Twin of parallel_conflict_ancestor.mjs: a region's transition against an ancestor's reached
from another region; `always` on a parallel state and on the root."""

from typing import Any

from agent_explorer.engine import assign, setup


def note(tag: str) -> Any:
    return assign({"log": lambda c, e, p: [*c["log"], f"{tag}:{e['type']}"]})


def build() -> Any:
    return setup().create_machine(
        {
            "id": "anc",
            "context": {"log": [], "n": 0},
            "initial": "outer",
            "always": {
                "guard": lambda c, e, p: c["n"] == 3,
                "actions": [note("root always"), assign({"n": 4})],
            },
            "states": {
                "outer": {
                    "initial": "par",
                    "on": {
                        "E": {"target": ".away", "actions": note("outer E")},
                        "F": {"target": ".away", "actions": note("outer F")},
                        "G": {"actions": note("outer G targetless")},
                    },
                    "states": {
                        "par": {
                            "type": "parallel",
                            "always": {
                                "guard": lambda c, e, p: c["n"] == 1,
                                "actions": [note("par always"), assign({"n": 2})],
                            },
                            "states": {
                                "r1": {
                                    "initial": "a",
                                    "states": {
                                        "a": {
                                            "on": {
                                                "E": {
                                                    "target": "b",
                                                    "actions": note("r1 E"),
                                                },
                                                "G": {
                                                    "target": "b",
                                                    "actions": note("r1 G"),
                                                },
                                            }
                                        },
                                        "b": {
                                            "on": {
                                                "BUMP": {
                                                    "actions": assign(
                                                        {
                                                            "n": lambda c, e, p: (
                                                                c["n"] + 1
                                                            )
                                                        }
                                                    )
                                                }
                                            }
                                        },
                                    },
                                },
                                "r2": {
                                    "initial": "x",
                                    "states": {
                                        "x": {
                                            "on": {
                                                "F": {
                                                    "target": "y",
                                                    "actions": note("r2 F"),
                                                }
                                            }
                                        },
                                        "y": {},
                                    },
                                },
                            },
                        },
                        "away": {"on": {"BACK": "par"}},
                    },
                },
            },
        }
    )
