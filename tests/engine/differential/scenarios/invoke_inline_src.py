"""Twin of invoke_inline_src.mjs: inline actor logic gets XState's generated src name."""

from typing import Any

from agent_explorer.engine import assign, from_promise, setup


async def forty_two(input: Any) -> int:
    return 42


def build() -> Any:
    return setup().create_machine(
        {
            "id": "inline",
            "context": {"out": None},
            "initial": "run",
            "states": {
                "run": {
                    "invoke": {
                        "id": "anonJob",
                        "src": from_promise(forty_two),
                        "input": {"k": 1},
                        "onDone": {
                            "target": "done",
                            "actions": assign({"out": lambda c, e, p: e["output"]}),
                        },
                    },
                },
                "done": {},
            },
        }
    )
