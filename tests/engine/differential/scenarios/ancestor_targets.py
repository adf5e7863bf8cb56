"""Twin of ancestor_targets.mjs: descendant -> ancestor targets, with and without reenter."""

from typing import Any

from agent_explorer.engine import assign, setup


def count(key: str) -> Any:
    return assign({key: lambda c, e, p: c[key] + 1})


def build() -> Any:
    return setup(actions={"ping": lambda c, e, p: None}).create_machine(
        {
            "id": "anc",
            "context": {"enterP": 0, "exitP": 0, "enterPar": 0, "exitPar": 0},
            "initial": "p",
            "states": {
                "p": {
                    "id": "P",
                    "entry": count("enterP"),
                    "exit": count("exitP"),
                    "initial": "c1",
                    "states": {
                        "c1": {"on": {"NEXT": "c2"}},
                        "c2": {
                            "entry": "ping",
                            "on": {
                                "UP": "#P",
                                "UP_REENTER": {"target": "#P", "reenter": True},
                                "ROOT": "#anc",
                                "PAR": "#anc.par",
                            },
                        },
                    },
                },
                "par": {
                    "type": "parallel",
                    "entry": count("enterPar"),
                    "exit": count("exitPar"),
                    "states": {
                        "r1": {
                            "initial": "x",
                            "states": {
                                "x": {"on": {"MOVE": "y"}},
                                "y": {
                                    "on": {
                                        "TOP": "#anc.par",
                                        "TOP_REENTER": {
                                            "target": "#anc.par",
                                            "reenter": True,
                                        },
                                    }
                                },
                            },
                        },
                        "r2": {
                            "initial": "u",
                            "states": {"u": {"on": {"MOVE": "v"}}, "v": {}},
                        },
                    },
                },
            },
        }
    )
