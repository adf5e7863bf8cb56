"""Twin of error_in_transition.mjs: exceptions in transition propagate; send_to a missing child."""

from typing import Any

from agent_explorer.engine import assign, send_to, setup


def explode(context: Any, event: Any, params: Any) -> Any:
    raise RuntimeError(f"exploded on {event['type']}")


def guard_throws(context: Any, event: Any, params: Any) -> bool:
    raise RuntimeError("guard blew up")


def build() -> Any:
    return setup().create_machine(
        {
            "id": "thrower",
            "context": {"n": 0},
            "initial": "ok",
            "states": {
                "ok": {
                    "on": {
                        "INC": {"actions": assign({"n": lambda c, e, p: c["n"] + 1})},
                        "EXPLODE": {"target": "never", "actions": assign(explode)},
                        "GUARD_THROWS": {"target": "never", "guard": guard_throws},
                        "SEND_NOWHERE": {
                            "actions": send_to("ghost", {"type": "HELLO"})
                        },
                    },
                },
                "never": {},
            },
        }
    )
