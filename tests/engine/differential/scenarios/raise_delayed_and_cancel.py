"""Twin of raise_delayed_and_cancel.mjs: delayed raises come back as actions; cancel by id."""

from typing import Any

from agent_explorer.engine import assign, cancel, raise_, setup


def build() -> Any:
    return setup(delays={"short": 250}).create_machine(
        {
            "id": "timer",
            "context": {"pings": 0},
            "initial": "waiting",
            "states": {
                "waiting": {
                    "entry": [
                        raise_({"type": "PING"}, delay=1000, id="ping"),
                        raise_({"type": "PING"}, delay="short"),
                    ],
                    "on": {
                        "PING": {
                            "actions": assign({"pings": lambda c, e, p: c["pings"] + 1})
                        },
                        "STOP": {"target": "stopped", "actions": cancel("ping")},
                        "DYN": {
                            "actions": raise_(
                                lambda c, e, p: {"type": "PING", "ms": e["ms"]},
                                delay=lambda c, e, p: e["ms"],
                                id="dyn",
                            )
                        },
                    },
                },
                "stopped": {"on": {"PING": {"actions": assign({"pings": -1})}}},
            },
        }
    )
