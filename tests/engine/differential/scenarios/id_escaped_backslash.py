"""Twin of id_escaped_backslash.mjs: '#some\\\\.thing' is the id 'some\\', then its child thing."""

from typing import Any

from agent_explorer.engine import setup


def build() -> Any:
    return setup().create_machine(
        {
            "initial": "start",
            "states": {
                "start": {"on": {"EV": "#some\\\\.thing"}},
                "foo": {"id": "some\\.thing"},
                "bar": {"id": "some\\", "initial": "baz", "states": {"baz": {}, "thing": {}}},
            },
        }
    )
