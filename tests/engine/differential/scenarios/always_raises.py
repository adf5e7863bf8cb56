"""Twin of always_raises.mjs: an `always` transition that raises, in one macrostep."""

from typing import Any

from agent_explorer.engine import assign, raise_, setup


def push(tag: str) -> Any:
    return assign({"trail": lambda c, e, p: [*c["trail"], tag]})


def build() -> Any:
    return setup().create_machine(
        {
            "id": "chain",
            "context": {"trail": [], "armed": False},
            "initial": "start",
            "states": {
                "start": {"on": {"GO": "a"}},
                "a": {
                    "entry": push("enter a"),
                    "always": {
                        "target": "b",
                        "actions": [raise_({"type": "PING"}), push("a->b")],
                    },
                },
                "b": {
                    "entry": [push("enter b"), raise_({"type": "PONG"})],
                    "on": {
                        "PING": {
                            "actions": [push("ping in b"), assign({"armed": True})]
                        },
                        "PONG": {"target": "c", "actions": push("pong in b")},
                    },
                },
                "c": {
                    "entry": push("enter c"),
                    "always": {
                        "guard": lambda c, e, p: c["armed"],
                        "target": "d",
                        "actions": push("c->d armed"),
                    },
                    "on": {"PING": {"actions": push("ping in c")}},
                },
                "d": {"entry": push("enter d"), "on": {"GO": "start"}},
            },
        }
    )
