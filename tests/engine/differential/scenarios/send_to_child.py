"""Twin of send_to_child.mjs: send_to an invoked child, immediate and delayed with an id."""

from typing import Any

from agent_explorer.engine import from_promise, send_to, setup


async def worker(input: Any) -> str:
    return "never runs"


def build() -> Any:
    return setup(actors={"worker": from_promise(worker)}).create_machine(
        {
            "id": "boss",
            "context": {"job": 7},
            "initial": "working",
            "states": {
                "working": {
                    "invoke": {
                        "id": "w1",
                        "src": "worker",
                        "input": lambda c, e, p: {"job": c["job"]},
                    },
                    "on": {
                        "NUDGE": {"actions": send_to("w1", {"type": "HURRY"})},
                        "LATER": {
                            "actions": send_to(
                                "w1",
                                lambda c, e, p: {
                                    "type": "CHECK",
                                    "job": c["job"],
                                    "note": e["note"],
                                },
                                delay=500,
                                id="check",
                            )
                        },
                        "DONE": "idle",
                    },
                },
                "idle": {"on": {"BACK": "working"}},
            },
        }
    )
