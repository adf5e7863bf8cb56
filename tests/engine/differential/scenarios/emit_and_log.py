"""Twin of emit_and_log.mjs: emit and log come back as xstate.emit / xstate.log actions."""

from typing import Any

from agent_explorer.engine import assign, emit, log, setup


def build() -> Any:
    return setup().create_machine(
        {
            "id": "talk",
            "context": {"said": 0},
            "initial": "quiet",
            "states": {
                "quiet": {
                    "on": {
                        "SAY": {
                            "target": "talking",
                            "actions": [
                                assign({"said": lambda c, e, p: c["said"] + 1}),
                                emit(
                                    lambda c, e, p: {
                                        "type": "said",
                                        "text": e["text"],
                                        "count": c["said"],
                                    }
                                ),
                                log(lambda c, e, p: f"said {e['text']}", "speech"),
                                log("plain"),
                            ],
                        },
                    },
                },
                "talking": {
                    "entry": emit({"type": "started"}),
                    "exit": log(lambda c, e, p: c["said"]),
                    "on": {"HUSH": "quiet"},
                },
            },
        }
    )
