"""Twin of final_compound_ondone.mjs: a final child raises xstate.done.state.<id> to onDone."""

from typing import Any

from agent_explorer.engine import assign, setup


def build() -> Any:
    return setup(actions={"finished": lambda c, e, p: None}).create_machine(
        {
            "id": "form",
            "context": {"doneEvents": []},
            "initial": "editing",
            "states": {
                "editing": {
                    "initial": "name",
                    "states": {
                        "name": {"on": {"NEXT": "email"}},
                        "email": {"on": {"NEXT": "complete"}},
                        "complete": {"type": "final", "entry": "finished"},
                    },
                    "onDone": {
                        "target": "review",
                        "actions": assign(
                            {
                                "doneEvents": lambda c, e, p: [
                                    *c["doneEvents"],
                                    e["type"],
                                ]
                            }
                        ),
                    },
                },
                "review": {"on": {"EDIT": "editing"}},
            },
        }
    )
