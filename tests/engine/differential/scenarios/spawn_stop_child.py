"""Twin of spawn_stop_child.mjs: spawned children in the snapshot; stop by id, dynamic, missing."""

from typing import Any

from agent_explorer.engine import from_promise, setup, spawn_child, stop_child


async def fetcher(input: Any) -> int:
    return 1


async def saver(input: Any) -> int:
    return 2


def build() -> Any:
    return setup(
        actors={"fetcher": from_promise(fetcher), "saver": from_promise(saver)}
    ).create_machine(
        {
            "id": "pool",
            "context": {"url": "/a"},
            "initial": "running",
            "states": {
                "running": {
                    "on": {
                        "SPAWN": {
                            "actions": spawn_child(
                                "fetcher",
                                id="f1",
                                input=lambda c, e, p: {"url": c["url"], "n": e["n"]},
                            )
                        },
                        "SPAWN2": {"actions": spawn_child("saver", id="s1", input=5)},
                        "SPAWN_PLAIN": {"actions": spawn_child("saver", id="s2")},
                        "STOP1": {"actions": stop_child("f1")},
                        "STOP_DYN": {"actions": stop_child(lambda c, e, p: e["id"])},
                        "STOP_MISSING": {"actions": stop_child("nope")},
                        "END": "ended",
                    },
                },
                "ended": {"type": "final"},
            },
        }
    )
