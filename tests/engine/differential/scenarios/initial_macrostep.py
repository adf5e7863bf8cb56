"""Twin of initial_macrostep.mjs: the initial transition is a whole macrostep (raise, always)."""

import json
from typing import Any

from agent_explorer.engine import assign, raise_, setup


def seen(text: Any) -> Any:
    return assign({"seen": lambda c, e, p: [*c["seen"], text(c, e)]})


def root_entry(c: Any, e: Any) -> str:
    return f"root entry {e['type']} {json.dumps(e.get('input'), separators=(',', ':'))}"


def build() -> Any:
    return setup(actions={"hello": lambda c, e, p: None}).create_machine(
        {
            "id": "boot",
            "context": lambda input: {"seen": [], "mode": input["mode"]},
            "initial": "start",
            "entry": [seen(root_entry), "hello"],
            "states": {
                "start": {
                    "entry": [
                        raise_({"type": "READY"}),
                        seen(lambda c, e: f"start entry {e['type']}"),
                    ],
                    "always": {
                        "guard": lambda c, e, p: c["mode"] == "fast",
                        "target": "fast",
                    },
                    "on": {
                        "READY": {
                            "target": "ready",
                            "actions": seen(lambda c, e: f"ready via {e['type']}"),
                        }
                    },
                },
                "fast": {
                    "on": {
                        "READY": {
                            "target": "ready",
                            "actions": seen(lambda c, e: "fast got READY"),
                        }
                    }
                },
                "ready": {
                    "always": {
                        "target": "settled",
                        "actions": seen(lambda c, e: f"always after {e['type']}"),
                    },
                },
                "settled": {"on": {"PING": {"actions": seen(lambda c, e: "ping")}}},
            },
        }
    )
