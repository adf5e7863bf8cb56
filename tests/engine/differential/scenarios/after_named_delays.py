"""Twin of after_named_delays.mjs: named delays (number and function), guarded after-lists."""

from typing import Any

from agent_explorer.engine import assign, setup


def build() -> Any:
    return setup(
        delays={
            "retryDelay": lambda c, e, p: 100 * 2 ** c["attempts"],
            "timeout": 5000,
        },
    ).create_machine(
        {
            "id": "retry",
            "context": {"attempts": 0},
            "initial": "waiting",
            "states": {
                "waiting": {
                    "after": {
                        "retryDelay": [
                            {
                                "guard": lambda c, e, p: c["attempts"] < 2,
                                "target": "waiting",
                                "reenter": True,
                                "actions": assign(
                                    {"attempts": lambda c, e, p: c["attempts"] + 1}
                                ),
                            },
                            {"target": "failed"},
                        ],
                        "timeout": "failed",
                    },
                    "on": {"OK": "ok"},
                },
                "failed": {},
                "ok": {},
            },
        }
    )
