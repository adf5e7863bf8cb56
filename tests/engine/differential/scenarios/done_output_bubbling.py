"""Twin of done_output_bubbling.mjs: final `output` in done events, bubbling level by level."""

import json
from typing import Any

from agent_explorer.engine import assign, setup


def push(tag: str) -> Any:
    def entry(c: Any, e: Any, p: Any) -> list[str]:
        output = json.dumps(e.get("output"), separators=(",", ":"), ensure_ascii=False)
        return [*c["log"], f"{tag}|{e['type']}|{output}"]

    return assign({"log": entry})


def build() -> Any:
    return setup().create_machine(
        {
            "id": "bubble",
            "context": {"log": [], "score": 5},
            "initial": "outer",
            "states": {
                "outer": {
                    "id": "outerBox",
                    "initial": "par",
                    "states": {
                        "par": {
                            "type": "parallel",
                            "states": {
                                "left": {
                                    "initial": "work",
                                    "states": {
                                        "work": {"on": {"L": "fin"}},
                                        "fin": {
                                            "type": "final",
                                            "output": lambda c, e, p: {
                                                "side": "left",
                                                "score": c["score"],
                                            },
                                        },
                                    },
                                    "onDone": {"actions": push("left onDone")},
                                },
                                "right": {
                                    "id": "rightRegion",
                                    "initial": "work",
                                    "states": {
                                        "work": {"on": {"R": "fin"}},
                                        "fin": {
                                            "type": "final",
                                            "output": {"side": "right"},
                                        },
                                    },
                                    "onDone": {"actions": push("right onDone")},
                                },
                            },
                            "onDone": {"target": "last", "actions": push("par onDone")},
                        },
                        "last": {
                            "type": "final",
                            "output": lambda c, e, p: {"from": e["type"]},
                        },
                    },
                    "onDone": {"target": "after", "actions": push("outer onDone")},
                },
                "after": {"on": {"AGAIN": "outer"}},
            },
        }
    )
