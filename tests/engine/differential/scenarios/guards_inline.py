"""Twin of guards_inline.mjs: inline guard callables on transitions and on `always`."""

from typing import Any

from agent_explorer.engine import assign, setup


def build() -> Any:
    return setup().create_machine(
        {
            "id": "gate",
            "context": {"opened": 0},
            "initial": "closed",
            "states": {
                "closed": {
                    "on": {
                        "KNOCK": [
                            {
                                "guard": lambda c, e, p: e["secret"] == "sesame",
                                "target": "open",
                            },
                            {
                                "guard": lambda c, e, p: c["opened"] > 1,
                                "target": "open",
                            },
                        ],
                    },
                },
                "open": {
                    "entry": assign({"opened": lambda c, e, p: c["opened"] + 1}),
                    "always": {
                        "guard": lambda c, e, p: c["opened"] >= 3,
                        "target": "broken",
                    },
                    "on": {"CLOSE": "closed"},
                },
                "broken": {},
            },
        }
    )
