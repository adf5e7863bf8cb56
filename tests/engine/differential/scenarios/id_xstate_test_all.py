"""Twin of id_xstate_test_all.mjs: XState's id.test.ts testAll machine (`#id`, `#id.child`)."""

from typing import Any

from agent_explorer.engine import setup


def build() -> Any:
    return setup().create_machine(
        {
            "initial": "A",
            "states": {
                "A": {
                    "id": "A",
                    "initial": "foo",
                    "states": {
                        "foo": {"id": "A_foo", "on": {"NEXT": "#A_bar"}},
                        "bar": {"id": "A_bar", "on": {"NEXT": "#B_foo"}},
                    },
                    "on": {"NEXT_DOT_RESOLVE": "#B.bar"},
                },
                "B": {
                    "id": "B",
                    "initial": "foo",
                    "states": {
                        "foo": {"id": "B_foo", "on": {"NEXT": "#B_bar", "NEXT_DOT": "#B.dot"}},
                        "bar": {"id": "B_bar", "on": {"NEXT": "#A_foo"}},
                        "dot": {},
                    },
                },
            },
        }
    )
