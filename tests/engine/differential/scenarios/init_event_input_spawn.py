"""Twin of init_event_input_spawn.mjs: initial entries see xstate.init (with input)."""

from typing import Any

from agent_explorer.engine import assign, from_promise, setup, spawn_child


async def w(input: Any) -> int:
    return 0


def build() -> Any:
    return setup(actors={"w": from_promise(w)}).create_machine(
        {
            "id": "initspawn",
            "context": lambda input: {"user": input["user"]},
            "type": "parallel",
            "states": {
                "work": {
                    "initial": "running",
                    "states": {
                        "running": {
                            "entry": spawn_child(
                                "w",
                                id="spawned",
                                input=lambda c, e, p: {
                                    "from": e["type"],
                                    "user": e["input"]["user"],
                                },
                            ),
                            "invoke": {
                                "id": "invoked",
                                "src": "w",
                                "input": lambda c, e, p: {
                                    "user": c["user"],
                                    "type": e["type"],
                                },
                            },
                        },
                    },
                },
                "flag": {
                    "initial": "check",
                    "states": {
                        "check": {
                            "always": {
                                "target": "set",
                                "guard": lambda c, e, p: e["type"] == "xstate.init",
                            }
                        },
                        "set": {"type": "final"},
                    },
                    "onDone": {
                        "actions": assign({"flagDone": lambda c, e, p: e["type"]})
                    },
                },
            },
        }
    )
