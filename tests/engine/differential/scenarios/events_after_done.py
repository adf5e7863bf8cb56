"""Twin of events_after_done.mjs: handlers of active nodes still run after status done."""

from typing import Any

from agent_explorer.engine import assign, setup


def build() -> Any:
    return setup(actions={"late": lambda c, e, p: None}).create_machine(
        {
            "id": "once",
            "context": {"n": 0},
            "initial": "go",
            "states": {
                "go": {"on": {"FINISH": "end"}},
                "end": {
                    "type": "final",
                    "on": {
                        "POKE": {
                            "actions": [
                                "late",
                                assign({"n": lambda c, e, p: c["n"] + 1}),
                            ]
                        }
                    },
                },
            },
            "on": {"ANY": {"actions": assign({"n": lambda c, e, p: c["n"] + 10})}},
            "output": lambda c, e, p: c["n"],
        }
    )
