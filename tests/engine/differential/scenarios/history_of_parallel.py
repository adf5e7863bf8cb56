"""Twin of history_of_parallel.mjs: history remembering a parallel state, shallow and deep."""

from typing import Any

from agent_explorer.engine import setup


def build() -> Any:
    return setup().create_machine(
        {
            "id": "hp",
            "initial": "main",
            "states": {
                "main": {
                    "initial": "simple",
                    "on": {"AWAY": "away"},
                    "states": {
                        "simple": {"on": {"SPLIT": "split"}},
                        "split": {
                            "type": "parallel",
                            "states": {
                                "x": {
                                    "initial": "x1",
                                    "states": {"x1": {"on": {"X": "x2"}}, "x2": {}},
                                },
                                "y": {
                                    "initial": "y1",
                                    "states": {
                                        "y1": {"on": {"Y": "y2"}},
                                        "y2": {"on": {"SELF_HIST": "#hp.main.shallow"}},
                                    },
                                },
                            },
                            "on": {"SIMPLE": "simple"},
                        },
                        "shallow": {"type": "history"},
                        "deep": {"type": "history", "history": "deep"},
                    },
                },
                "away": {
                    "on": {"BACK_SHALLOW": "main.shallow", "BACK_DEEP": "main.deep"}
                },
            },
        }
    )
