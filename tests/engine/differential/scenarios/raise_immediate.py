"""Twin of raise_immediate.mjs: immediate raises go to the internal queue, FIFO, same macrostep."""

from typing import Any

from agent_explorer.engine import assign, raise_, setup


def push(tag: str) -> Any:
    return assign({"trail": lambda c, e, p: [*c["trail"], tag]})


def build() -> Any:
    return setup(actions={"seen": lambda c, e, p: None}).create_machine(
        {
            "id": "queue",
            "context": {"trail": []},
            "initial": "one",
            "states": {
                "one": {
                    "on": {
                        "KICK": {
                            "target": "two",
                            "actions": [
                                raise_({"type": "FIRST"}),
                                raise_(
                                    lambda c, e, p: {
                                        "type": "SECOND",
                                        "from": e["type"],
                                    }
                                ),
                                push("kick"),
                            ],
                        },
                    },
                },
                "two": {
                    "entry": [push("enter two"), raise_({"type": "THIRD"}, id="third")],
                    "on": {
                        "FIRST": {"actions": [push("first"), "seen"]},
                        "SECOND": {
                            "actions": [push("second"), raise_({"type": "FOURTH"})]
                        },
                        "THIRD": {"actions": push("third")},
                        "FOURTH": {"target": "three", "actions": push("fourth")},
                    },
                },
                "three": {"on": {"KICK": "one"}},
            },
        }
    )
