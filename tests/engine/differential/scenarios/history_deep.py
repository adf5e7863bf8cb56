"""Twin of history_deep.mjs: deep history restores the subtree, shallow only the first level."""

from typing import Any

from agent_explorer.engine import setup


def build() -> Any:
    return setup().create_machine(
        {
            "id": "doc",
            "initial": "edit",
            "states": {
                "edit": {
                    "initial": "text",
                    "states": {
                        "text": {
                            "initial": "plain",
                            "states": {
                                "plain": {"on": {"STYLE": "styled"}},
                                "styled": {
                                    "initial": "s1",
                                    "states": {"s1": {"on": {"MORE": "s2"}}, "s2": {}},
                                },
                            },
                        },
                        "image": {},
                        "deepHist": {"type": "history", "history": "deep"},
                        "shallowHist": {"type": "history", "history": "shallow"},
                    },
                    "on": {"SAVE": "saving", "IMAGE": ".image"},
                },
                "saving": {
                    "on": {
                        "BACK_DEEP": "edit.deepHist",
                        "BACK_SHALLOW": "edit.shallowHist",
                    }
                },
            },
        }
    )
