"""Twin of after_numbers.mjs: numeric `after` timers, cancel on exit, stale after-events."""

from typing import Any

from agent_explorer.engine import assign, setup


def build() -> Any:
    return setup().create_machine(
        {
            "id": "toast",
            "context": {"shown": 0},
            "initial": "hidden",
            "states": {
                "hidden": {"on": {"SHOW": "visible"}},
                "visible": {
                    "entry": assign({"shown": lambda c, e, p: c["shown"] + 1}),
                    "after": {
                        1000: {
                            "target": ".faded",
                            "actions": assign(
                                {"shown": lambda c, e, p: c["shown"] + 10}
                            ),
                        },
                        3000: "hidden",
                    },
                    "initial": "bright",
                    "states": {
                        "bright": {},
                        "faded": {"after": {500: "#toast.hidden"}},
                    },
                    "on": {"DISMISS": "hidden"},
                },
            },
        }
    )
