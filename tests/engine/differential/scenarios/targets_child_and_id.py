"""Twin of targets_child_and_id.mjs: sibling, `.child` and `#id` targets."""

from typing import Any

from agent_explorer.engine import setup


def build() -> Any:
    return setup().create_machine(
        {
            "id": "nav",
            "initial": "home",
            "states": {
                "home": {
                    "initial": "top",
                    "states": {
                        "top": {"on": {"DOWN": "bottom"}},
                        "bottom": {"id": "homeBottom"},
                    },
                    "on": {"SETTINGS": "settings", "BOTTOM": ".bottom", "TOP": ".top"},
                },
                "settings": {
                    "initial": "general",
                    "states": {
                        "general": {},
                        "privacy": {
                            "id": "privacy",
                            "initial": "cookies",
                            "states": {"cookies": {}, "tracking": {"id": "tracking"}},
                        },
                    },
                    "on": {
                        "PRIVACY": "#privacy",
                        "TRACKING": "#tracking",
                        "HOME_BOTTOM": "#homeBottom",
                        "HOME": "#nav.home",
                    },
                },
            },
        }
    )
