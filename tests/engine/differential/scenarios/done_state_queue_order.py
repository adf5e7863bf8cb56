"""Twin of done_state_queue_order.mjs: raises from exit/final entry are queued before done.state."""

from typing import Any

from agent_explorer.engine import assign, raise_, setup


def push(tag: str) -> Any:
    return assign({"trail": lambda c, e, p: [*c["trail"], f"{tag}<{e['type']}>"]})


def build() -> Any:
    return setup().create_machine(
        {
            "id": "q",
            "context": {"trail": []},
            "initial": "job",
            "states": {
                "job": {
                    "initial": "run",
                    "states": {
                        "run": {
                            "exit": raise_({"type": "FROM_EXIT"}),
                            "on": {"FINISH": "end"},
                        },
                        "end": {
                            "type": "final",
                            "entry": [
                                raise_({"type": "FROM_FINAL"}),
                                push("final entry"),
                            ],
                        },
                    },
                    "on": {
                        "FROM_EXIT": {"actions": push("job got")},
                        "FROM_FINAL": {"actions": push("job got")},
                    },
                    "onDone": {"target": "after", "actions": push("onDone")},
                },
                "after": {
                    "on": {
                        "FROM_EXIT": {"actions": push("after got")},
                        "FROM_FINAL": {"actions": push("after got")},
                        "RESTART": "job",
                    },
                },
            },
        }
    )
