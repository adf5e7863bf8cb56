"""Twin of action_order_levels.mjs: exits inner-first, transition actions, entries outer-first."""

from typing import Any

from agent_explorer.engine import assign, setup


def push(tag: str) -> Any:
    return assign({"trail": lambda c, e, p: [*c["trail"], tag]})


def mark(at: str, **more: Any) -> dict[str, Any]:
    return {"type": "mark", "params": {"at": at, **more}}


def build() -> Any:
    return setup(actions={"mark": lambda c, e, p: None}).create_machine(
        {
            "id": "order",
            "context": {"trail": []},
            "initial": "a",
            "states": {
                "a": {
                    "exit": [push("exit a"), mark("exit a")],
                    "initial": "a1",
                    "states": {
                        "a1": {
                            "exit": [push("exit a1"), mark("exit a1")],
                            "initial": "a11",
                            "states": {
                                "a11": {
                                    "exit": [push("exit a11"), mark("exit a11")],
                                    "on": {
                                        "GO": {
                                            "target": "#order.b.b1.b11",
                                            "actions": [
                                                push("transition 1"),
                                                mark("transition"),
                                                push("transition 2"),
                                            ],
                                        },
                                    },
                                },
                            },
                        },
                    },
                },
                "b": {
                    "entry": [push("entry b"), mark("entry b")],
                    "initial": "b1",
                    "states": {
                        "b1": {
                            "entry": [push("entry b1"), mark("entry b1")],
                            "initial": "b10",
                            "states": {
                                "b10": {},
                                "b11": {
                                    "entry": [
                                        push("entry b11"),
                                        mark("entry b11", n=11),
                                    ]
                                },
                            },
                        },
                    },
                    "on": {"AGAIN": {"target": "a", "actions": push("to a")}},
                },
            },
        }
    )
