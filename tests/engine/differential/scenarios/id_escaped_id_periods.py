"""Twin of id_escaped_id_periods.mjs: '#foo\\.bar' is the id "foo.bar"; '#foo.bar' is foo > bar."""

from typing import Any

from agent_explorer.engine import setup


def build() -> Any:
    return setup().create_machine(
        {
            "initial": "start",
            "states": {
                "start": {"on": {"escaped": "#foo\\.bar", "unescaped": "#foo.bar"}},
                "stateWithDot": {"id": "foo.bar"},
                "foo": {"id": "foo", "initial": "bar", "states": {"bar": {}}},
            },
        }
    )
