"""Twin of final_with_children.mjs: a final state that declares `initial` and child states."""

from typing import Any

from agent_explorer.engine import setup


def build() -> Any:
    return setup(actions={"marked": lambda c, e, p: None, "announce": lambda c, e, p: None}).create_machine(
        {
            "id": "game",
            "initial": "play",
            "states": {
                "play": {
                    "initial": "a",
                    "states": {
                        "a": {"on": {"WIN": "won", "DEEP": "won.y"}},
                        "won": {
                            "type": "final",
                            "initial": {
                                "target": "x",
                                "actions": [{"type": "announce", "params": {"where": "won initial"}}],
                            },
                            "entry": {"type": "marked", "params": {"where": "won entry"}},
                            "output": {"prize": 1},
                            "states": {
                                "x": {"entry": {"type": "marked", "params": {"where": "x entry"}}},
                                "y": {"tags": ["inside-final"]},
                            },
                        },
                    },
                    "onDone": "debrief",
                },
                "debrief": {"on": {"AGAIN": "play", "REGION": "rooms"}},
                "rooms": {
                    "type": "parallel",
                    "states": {
                        "r1": {
                            "initial": "a",
                            "states": {
                                "a": {"on": {"DEEP": "f.y", "SHALLOW": "f"}},
                                "f": {
                                    "type": "final",
                                    "initial": "x",
                                    "states": {"x": {}, "y": {"tags": ["inside-final"], "on": {"Z": "x"}}},
                                },
                            },
                        },
                        "r2": {"initial": "c", "states": {"c": {"on": {"END": "g"}}, "g": {"type": "final"}}},
                    },
                    "onDone": "debrief",
                },
            },
        }
    )
