"""Twin of invoke_done.mjs: invoke with id/src/input; onDone via xstate.done.actor.<id>."""

from typing import Any

from agent_explorer.engine import assign, from_promise, setup


async def lookup(input: Any) -> Any:
    return {"found": input["q"]}


def build() -> Any:
    search = {"target": "loading", "actions": assign({"q": lambda c, e, p: e["q"]})}
    return setup(actors={"lookup": from_promise(lookup)}).create_machine(
        {
            "id": "search",
            "context": {"q": "cats", "result": None},
            "initial": "idle",
            "states": {
                "idle": {"on": {"SEARCH": search}},
                "loading": {
                    "invoke": {
                        "id": "lookup1",
                        "src": "lookup",
                        "input": lambda c, e, p: {"q": c["q"]},
                        "onDone": {
                            "target": "ready",
                            "actions": assign({"result": lambda c, e, p: e["output"]}),
                        },
                    },
                },
                "ready": {"on": {"SEARCH": search}},
            },
        }
    )
