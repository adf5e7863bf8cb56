"""Twin of id_issue22_id_then_path.mjs: '#foo.bar' is id foo > bar, not the state with id "foo.bar"."""

from typing import Any

from agent_explorer.engine import setup


def build() -> Any:
    return setup().create_machine(
        {
            "id": "m",
            "initial": "start",
            "states": {
                "start": {"on": {"GO": "#foo.bar", "X": "#foo\\.bar"}},
                "x": {"id": "foo.bar", "on": {"BACK": "start"}},
                "foo": {"id": "foo", "initial": "a", "states": {"a": {}, "bar": {}}, "on": {"BACK": "start"}},
            },
        }
    )
