"""Twin of invoke_default_id.mjs: an invoke without id gets XState's generated id."""

from typing import Any

from agent_explorer.engine import assign, from_promise, setup


async def a(input: Any) -> int:
    return 1


async def b(input: Any) -> int:
    return 2


def build() -> Any:
    return setup(actors={"a": from_promise(a), "b": from_promise(b)}).create_machine(
        {
            "id": "anon",
            "context": {"outputs": []},
            "initial": "running",
            "states": {
                "running": {
                    "invoke": [
                        {"src": "a", "input": {"which": "a"}},
                        {
                            "src": "b",
                            "id": "named",
                            "onDone": {
                                "actions": assign(
                                    {
                                        "outputs": lambda c, e, p: [
                                            *c["outputs"],
                                            e["output"],
                                        ]
                                    }
                                )
                            },
                        },
                    ],
                    "on": {"STOP": "stopped"},
                },
                "stopped": {},
            },
        }
    )
