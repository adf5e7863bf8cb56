"""Twin of parallel_three_regions.mjs: three regions, one nested; a shared event in document order."""

from typing import Any

from agent_explorer.engine import assign, setup


def note(what: str) -> dict[str, Any]:
    return {"type": "note", "params": {"what": what}}


def build() -> Any:
    return setup(
        actions={"note": assign({"log": lambda c, e, p: [*c["log"], p["what"]]})},
    ).create_machine(
        {
            "id": "tri",
            "context": {"log": []},
            "initial": "run",
            "states": {
                "run": {
                    "type": "parallel",
                    "on": {"STOP": "stopped"},
                    "states": {
                        "r1": {
                            "initial": "a",
                            "states": {
                                "a": {
                                    "on": {
                                        "TICK": {
                                            "target": "b",
                                            "actions": note("r1 a->b"),
                                        }
                                    }
                                },
                                "b": {
                                    "on": {
                                        "TICK": {
                                            "target": "a",
                                            "actions": note("r1 b->a"),
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
                                        "TICK": {
                                            "target": "y",
                                            "actions": note("r2 x->y"),
                                        }
                                    }
                                },
                                "y": {
                                    "initial": "y1",
                                    "states": {
                                        "y1": {
                                            "on": {
                                                "TICK": {
                                                    "target": "y2",
                                                    "actions": note("r2 y1->y2"),
                                                }
                                            }
                                        },
                                        "y2": {},
                                    },
                                },
                            },
                        },
                        "r3": {
                            "initial": "p",
                            "states": {
                                "p": {"on": {"TOCK": "q"}},
                                "q": {"exit": note("r3 exit q")},
                            },
                        },
                    },
                },
                "stopped": {"on": {"START": "run"}},
            },
        }
    )
