"""Twin of id_history_dotted_id.mjs: restoring a history record of a state whose id has a dot."""

from typing import Any

from agent_explorer.engine import setup


def build() -> Any:
    return setup().create_machine(
        {
            "id": "h",
            "initial": "p",
            "states": {
                "p": {
                    "initial": "a",
                    "states": {"a": {"on": {"NEXT": "b"}}, "b": {"id": "deep.b"}, "hist": {"type": "history"}},
                    "on": {"OUT": "q"},
                },
                "q": {"on": {"BACK": "p.hist"}},
            },
        }
    )
