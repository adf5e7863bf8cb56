"""Twin of invoke_stale_completion.mjs: completions for an invoke whose state was exited."""

from typing import Any

from agent_explorer.engine import assign, from_promise, setup


async def slow(input: Any) -> int:
    return 1


def build() -> Any:
    return setup(actors={"slow": from_promise(slow)}).create_machine(
        {
            "id": "stale",
            "context": {"got": []},
            "initial": "a",
            "states": {
                "a": {
                    "invoke": {
                        "id": "job",
                        "src": "slow",
                        "onDone": {
                            "target": "b",
                            "actions": assign(
                                {"got": lambda c, e, p: [*c["got"], e["output"]]}
                            ),
                        },
                    },
                    "on": {"SKIP": "b"},
                },
                "b": {"on": {"AGAIN": "a"}},
            },
            "on": {
                "xstate.done.actor.job": {
                    "actions": assign(
                        {"got": lambda c, e, p: [*c["got"], "root saw done"]}
                    )
                },
            },
        }
    )
