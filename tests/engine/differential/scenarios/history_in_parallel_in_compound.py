"""Twin of history_in_parallel_in_compound.mjs: history nodes inside regions inside a compound."""

from typing import Any

from agent_explorer.engine import setup


def build() -> Any:
    return setup(actions={"enterZoomed": lambda c, e, p: None}).create_machine(
        {
            "id": "app",
            "initial": "main",
            "states": {
                "main": {
                    "initial": "view",
                    "on": {"LOCK": "locked"},
                    "states": {
                        "view": {
                            "type": "parallel",
                            "states": {
                                "zoom": {
                                    "initial": "normal",
                                    "states": {
                                        "normal": {"on": {"ZOOM": "zoomed"}},
                                        "zoomed": {
                                            "entry": "enterZoomed",
                                            "initial": "x2",
                                            "states": {
                                                "x2": {"on": {"ZOOM": "x4"}},
                                                "x4": {},
                                            },
                                        },
                                        "h": {"type": "history", "history": "deep"},
                                    },
                                },
                                "panel": {
                                    "initial": "closed",
                                    "states": {
                                        "closed": {"on": {"PANEL": "open"}},
                                        "open": {"on": {"PANEL": "closed"}},
                                        "h": {"type": "history"},
                                    },
                                },
                            },
                        },
                        "settings": {},
                        "back": {"type": "history", "history": "deep"},
                    },
                },
                "locked": {
                    "on": {
                        "UNLOCK": "main.back",
                        "UNLOCK_REGIONS": {
                            "target": [
                                "#app.main.view.zoom.h",
                                "#app.main.view.panel.h",
                            ]
                        },
                        "UNLOCK_FRESH": "main",
                    },
                },
            },
        }
    )
