"""Twin of id_escaped_key_periods.mjs: a key "foo.bar" and the path foo > bar share a default id."""

from typing import Any

from agent_explorer.engine import setup


def build() -> Any:
    return setup().create_machine(
        {
            "initial": "start",
            "states": {
                "start": {"on": {"escaped": "foo\\.bar", "unescaped": "foo.bar"}},
                "foo.bar": {},
                "foo": {"initial": "bar", "states": {"bar": {}}},
            },
        }
    )
