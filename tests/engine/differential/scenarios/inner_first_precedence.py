"""Twin of inner_first_precedence.mjs: a child's handler shadows its ancestors' unless guarded off."""

from typing import Any

from agent_explorer.engine import assign, setup


def build() -> Any:
    noop = lambda c, e, p: None
    return setup(
        guards={"allowed": lambda c, e, p: c["allowed"]},
        actions={"parentHandled": noop, "childHandled": noop},
    ).create_machine(
        {
            "id": "prec",
            "context": {"allowed": True},
            "initial": "outer",
            "states": {
                "outer": {
                    "initial": "inner",
                    "on": {
                        "GO": {"target": "elsewhere", "actions": "parentHandled"},
                        "TOGGLE": {
                            "actions": assign(
                                {"allowed": lambda c, e, p: not c["allowed"]}
                            )
                        },
                    },
                    "states": {
                        "inner": {
                            "on": {
                                "GO": {
                                    "guard": "allowed",
                                    "target": "inner2",
                                    "actions": "childHandled",
                                }
                            }
                        },
                        "inner2": {
                            "on": {
                                "GO": {
                                    "guard": "allowed",
                                    "target": "inner",
                                    "actions": "childHandled",
                                }
                            }
                        },
                    },
                },
                "elsewhere": {"on": {"GO": "outer"}},
            },
            "on": {"GO": {"actions": "parentHandled"}},
        }
    )
