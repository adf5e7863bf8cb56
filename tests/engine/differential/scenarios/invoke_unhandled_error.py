"""Twin of invoke_unhandled_error.mjs: an unhandled xstate.error.actor.* -> status error."""

from typing import Any

from agent_explorer.engine import assign, from_promise, setup


async def risky(input: Any) -> int:
    return 1


def build() -> Any:
    return setup(actors={"risky": from_promise(risky)}).create_machine(
        {
            "id": "fragile",
            "context": {"n": 0},
            "initial": "working",
            "states": {
                "working": {
                    "invoke": {"id": "risk", "src": "risky"},
                    "on": {
                        "BUMP": {"actions": assign({"n": lambda c, e, p: c["n"] + 1})}
                    },
                },
            },
        }
    )
