"""Twin of id_explicit_duplicates.mjs: two explicit ids "dup"; the later wins; shared orders."""

from typing import Any

from agent_explorer.engine import assign, setup, state_in


def push(tag: str) -> Any:
    return assign({"trail": lambda c, e, p: [*c["trail"], tag]})


def leaf(name: str, **extra: Any) -> dict[str, Any]:
    return {"entry": push(f"enter {name}"), "exit": push(f"exit {name}"), **extra}


def build() -> Any:
    return setup().create_machine(
        {
            "id": "m",
            "context": {"trail": []},
            "initial": "idle",
            "states": {
                "idle": {"on": {"TO_DUP": "#dup", "TO_FIRST_B": "p.first.b", "TO_D": "#dup.d"}},
                "p": {
                    "type": "parallel",
                    "on": {"OUT": "idle"},
                    "states": {
                        "first": leaf(
                            "first",
                            id="dup",
                            initial="a",
                            states={"a": leaf("first.a", on={"NEXT": "b"}), "b": leaf("first.b")},
                        ),
                        "second": leaf(
                            "second",
                            id="dup",
                            initial="c",
                            states={"c": leaf("second.c"), "d": leaf("second.d")},
                        ),
                        "third": leaf(
                            "third",
                            initial="e",
                            states={
                                "e": leaf(
                                    "third.e",
                                    on={"JUMP": "#dup.d", "CHECK": {"guard": state_in("#dup.d"), "target": "f"}},
                                ),
                                "f": leaf("third.f"),
                            },
                        ),
                    },
                },
            },
        }
    )
