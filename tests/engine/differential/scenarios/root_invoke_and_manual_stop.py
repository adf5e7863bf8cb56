"""Twin of root_invoke_and_manual_stop.mjs: a root invoke; stop_child on an invoked child."""

from typing import Any

from agent_explorer.engine import assign, from_promise, setup, stop_child


async def watcher(input: Any) -> int:
    return 0


async def job(input: Any) -> int:
    return 1


def build() -> Any:
    return setup(
        actors={"watcher": from_promise(watcher), "job": from_promise(job)}
    ).create_machine(
        {
            "id": "rooted",
            "context": {"outputs": []},
            "invoke": {
                "id": "watch",
                "src": "watcher",
                "input": lambda c, e, p: {"size": len(c["outputs"])},
                "onDone": {
                    "actions": assign(
                        {
                            "outputs": lambda c, e, p: [
                                *c["outputs"],
                                f"watch:{e['output']}",
                            ]
                        }
                    )
                },
            },
            "initial": "working",
            "states": {
                "working": {
                    "invoke": {
                        "id": "job",
                        "src": "job",
                        "onDone": {
                            "target": "idle",
                            "actions": assign(
                                {
                                    "outputs": lambda c, e, p: [
                                        *c["outputs"],
                                        f"job:{e['output']}",
                                    ]
                                }
                            ),
                        },
                    },
                    "on": {"KILL": {"actions": stop_child("job")}, "LEAVE": "idle"},
                },
                "idle": {"on": {"WORK": "working"}},
            },
        }
    )
