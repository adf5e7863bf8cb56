"""Twin of parallel_entry_exit_order.mjs: region entry/exit order; an always in another region."""

from typing import Any

from agent_explorer.engine import assign, setup


def push(tag: str) -> Any:
    return assign({"trail": lambda c, e, p: [*c["trail"], tag]})


def leaf(name: str, **extra: Any) -> dict[str, Any]:
    return {"entry": push(f"enter {name}"), "exit": push(f"exit {name}"), **extra}


def build() -> Any:
    return setup(actions={"mark": lambda c, e, p: None}).create_machine(
        {
            "id": "po",
            "context": {"trail": []},
            "initial": "off",
            "states": {
                "off": {"on": {"ON": "on"}},
                "on": {
                    "type": "parallel",
                    "entry": push("enter on"),
                    "exit": push("exit on"),
                    "on": {"OFF": "off"},
                    "states": {
                        "r1": {
                            "entry": push("enter r1"),
                            "exit": push("exit r1"),
                            "initial": "a",
                            "states": {
                                "a": {
                                    "entry": [
                                        push("enter r1.a"),
                                        {"type": "mark", "params": {"s": "r1.a"}},
                                    ],
                                    "exit": push("exit r1.a"),
                                    "on": {"STEP": "b"},
                                },
                                "b": leaf("r1.b"),
                            },
                        },
                        "r2": {
                            "entry": push("enter r2"),
                            "exit": push("exit r2"),
                            "initial": "c",
                            "states": {
                                "c": {
                                    "entry": [
                                        push("enter r2.c"),
                                        {"type": "mark", "params": {"s": "r2.c"}},
                                    ],
                                    "exit": push("exit r2.c"),
                                    "always": {
                                        "guard": lambda c, e, p: (
                                            "enter r1.b" in c["trail"]
                                        ),
                                        "target": "d",
                                    },
                                },
                                "d": leaf("r2.d"),
                            },
                        },
                        "r3": {
                            "entry": push("enter r3"),
                            "exit": push("exit r3"),
                            "initial": "e",
                            "states": {
                                "e": leaf("r3.e", on={"STEP": "f"}),
                                "f": leaf("r3.f"),
                            },
                        },
                    },
                },
            },
        }
    )
