"""Twin of id_dotted_key_internal_target.mjs: '.other' from the key "foo.bar" is foo > bar > other."""

from typing import Any

from agent_explorer.engine import setup


def build() -> Any:
    return setup().create_machine(
        {
            "id": "m",
            "initial": "start",
            "states": {
                "start": {"on": {"KEYED": "foo\\.bar", "NESTED": "foo.bar"}},
                "foo.bar": {
                    "initial": "child",
                    "states": {"child": {}, "other": {}},
                    "on": {"IN": ".other", "BACK": "start"},
                },
                "foo": {
                    "initial": "bar",
                    "states": {"bar": {"initial": "x", "states": {"x": {}, "other": {}}}},
                    "on": {"BACK": "start", "OWN": "foo\\.bar.other"},
                },
            },
        }
    )
