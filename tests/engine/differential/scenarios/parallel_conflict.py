"""Twin of parallel_conflict.mjs: conflicting region transitions; document order decides."""

from typing import Any

from agent_explorer.engine import assign, setup


def note(what: str) -> Any:
    return assign({"log": lambda c, e, p: [*c["log"], what]})


def build() -> Any:
    return setup().create_machine(
        {
            "id": "conflict",
            "context": {"log": []},
            "initial": "p",
            "states": {
                "p": {
                    "type": "parallel",
                    "states": {
                        "r1": {
                            "initial": "a",
                            "states": {
                                "a": {
                                    "on": {
                                        "E": {
                                            "target": "#conflict.out1",
                                            "actions": note("r1 to out1"),
                                        },
                                        "F": {
                                            "target": "b",
                                            "actions": note("r1 a->b"),
                                        },
                                    }
                                },
                                "b": {},
                            },
                        },
                        "r2": {
                            "initial": "x",
                            "states": {
                                "x": {
                                    "on": {
                                        "E": {
                                            "target": "#conflict.out2",
                                            "actions": note("r2 to out2"),
                                        },
                                        "F": {
                                            "target": "#conflict.out2",
                                            "actions": note("r2 to out2"),
                                        },
                                    }
                                },
                            },
                        },
                        "r3": {
                            "initial": "m",
                            "states": {
                                "m": {
                                    "on": {
                                        "E": {"actions": note("r3 targetless")},
                                        "F": {
                                            "target": "n",
                                            "actions": note("r3 m->n"),
                                        },
                                    }
                                },
                                "n": {},
                            },
                        },
                    },
                },
                "out1": {"on": {"BACK": "p"}},
                "out2": {"on": {"BACK": "p"}},
            },
        }
    )
