"""Twin of json_numbers_unicode.mjs: floats (integral, -0, exponents), big ints, unicode keys."""

from typing import Any

from agent_explorer.engine import assign, setup


def build() -> Any:
    return setup().create_machine(
        {
            "id": "nums",
            "context": {
                "third": 1 / 3,
                "sum": 0.1 + 0.2,
                "big": 1e21,
                "small": 5e-7,
                "maxSafe": 9007199254740991,
                "negZero": -0.0,
                "text": 'café ☕ 😀 \u2028 "quoted" \\ tab\t',
                "keys": {"z": 1, "é": 2, "\ufb01": 3, "😀": 4, "A": 5, "": 6},
            },
            "initial": "a",
            "states": {
                "a": {
                    "on": {
                        "CALC": {
                            "actions": assign(
                                {
                                    # JS numbers are doubles: these are floats here too, on purpose.
                                    "half": lambda c, e, p: e["n"] / 2,
                                    "whole": lambda c, e, p: (e["n"] * 3) / 3,
                                    "scaled": lambda c, e, p: c["sum"] * 1e10,
                                    "tiny": lambda c, e, p: c["small"] / 1e10,
                                }
                            )
                        },
                        "ECHO": {
                            "actions": assign({"echo": lambda c, e, p: e["payload"]})
                        },
                    },
                },
            },
        }
    )
