"""Twin of final_parallel_all_regions.mjs: a parallel state is done when every region is final."""

from typing import Any

from agent_explorer.engine import assign, setup


def build() -> Any:
    return setup().create_machine(
        {
            "id": "upload",
            "context": {"seen": []},
            "initial": "working",
            "states": {
                "working": {
                    "type": "parallel",
                    "states": {
                        "files": {
                            "initial": "sending",
                            "states": {
                                "sending": {"on": {"FILES_OK": "sent"}},
                                "sent": {"type": "final"},
                            },
                        },
                        "meta": {
                            "initial": "sending",
                            "states": {
                                "sending": {"on": {"META_OK": "sent"}},
                                "sent": {"type": "final"},
                            },
                        },
                    },
                    "onDone": {
                        "target": "finished",
                        "actions": assign(
                            {"seen": lambda c, e, p: [*c["seen"], e["type"]]}
                        ),
                    },
                },
                "finished": {},
            },
        }
    )
