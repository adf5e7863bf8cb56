"""Twin of enqueue_all_kinds.mjs: enqueue_actions with every built-in kind and check(params)."""

from typing import Any

from agent_explorer.engine import enqueue_actions, from_promise, setup


async def helper(input: Any) -> str:
    return "h"


def on_go(args: Any, params: Any) -> None:
    enqueue, by = args.enqueue, args.event["by"]
    enqueue.assign({"n": args.context["n"] + by})
    enqueue.spawn_child("helper", id=f"h{by}", input={"by": by})
    enqueue.send_to(f"h{by}", {"type": "PING"})
    enqueue.raise_({"type": "LATER"}, delay=50, id="later")
    if args.check({"type": "over", "params": {"limit": 2}}):
        enqueue.cancel("later")
        enqueue.stop_child("h1")
        enqueue.emit({"type": "overflow"})
    enqueue({"type": "custom", "params": {"by": by}})


def build() -> Any:
    return setup(
        actors={"helper": from_promise(helper)},
        guards={"over": lambda c, e, p: c["n"] > p["limit"]},
        actions={"custom": lambda c, e, p: None},
    ).create_machine(
        {
            "id": "ek",
            "context": {"n": 0},
            "initial": "on",
            "states": {"on": {"on": {"GO": {"actions": enqueue_actions(on_go)}}}},
        }
    )
