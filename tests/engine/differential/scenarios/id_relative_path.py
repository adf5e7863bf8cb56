"""Twin of id_relative_path.mjs: '#bar.qux.quux' is the id `bar`, then the path qux > quux."""

from typing import Any

from agent_explorer.engine import setup


def build() -> Any:
    return setup().create_machine(
        {
            "initial": "foo",
            "on": {"ACTION": "#bar.qux.quux"},
            "states": {
                "foo": {"id": "foo"},
                "bar": {
                    "id": "bar",
                    "initial": "baz",
                    "states": {
                        "baz": {},
                        "qux": {"initial": "quux", "states": {"quux": {"id": "#bar.qux.quux"}}},
                    },
                },
            },
        }
    )
