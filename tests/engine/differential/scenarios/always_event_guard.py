"""Twin of always_event_guard.mjs: eventless guards see the event that started the macrostep."""

from typing import Any

from agent_explorer.engine import assign, raise_, setup


def trail(text: Any) -> Any:
    return assign({"trail": lambda c, e, p: [*c["trail"], text(e)]})


def build() -> Any:
    return setup().create_machine(
        {
            "id": "sees",
            "context": {"trail": []},
            "initial": "a",
            "states": {
                "a": {
                    "on": {
                        "GO": "b",
                        "JUMP": "b",
                        "RAISE": {"target": "b", "actions": raise_({"type": "INNER"})},
                    }
                },
                "b": {
                    "always": [
                        {
                            "guard": lambda c, e, p: e["type"] == "GO",
                            "target": "c",
                            "actions": trail(lambda e: f"b->c on {e['type']}"),
                        },
                        {
                            "guard": lambda c, e, p: e["type"] == "INNER",
                            "target": "a",
                            "actions": trail(lambda e: f"b->a on {e['type']}"),
                        },
                    ],
                    "on": {
                        "INNER": {"actions": trail(lambda e: "INNER handled in b")},
                        "BACK": "a",
                    },
                },
                "c": {"on": {"BACK": "a"}},
            },
        }
    )
