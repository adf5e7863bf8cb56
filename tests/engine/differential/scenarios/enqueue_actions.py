"""Twin of enqueue_actions.mjs: actions chosen at run time, with check(guard), in order."""

from typing import Any

from agent_explorer.engine import enqueue_actions, setup


def on_add(args: Any, params: Any) -> None:
    enqueue = args.enqueue
    enqueue.assign({"total": args.context["total"] + args.event["n"]})
    if args.check("isLarge"):
        enqueue({"type": "large", "params": {"n": args.event["n"]}})
        enqueue.raise_({"type": "BIG"})
    else:
        enqueue("small")
    enqueue.emit({"type": "added", "n": args.event["n"]})


def on_big(args: Any, params: Any) -> None:
    args.enqueue.assign(lambda c, e, p: {"total": c["total"] * 2})


def build() -> Any:
    noop = lambda c, e, p: None
    return setup(
        guards={"isLarge": lambda c, e, p: e["n"] > 10},
        actions={"small": noop, "large": noop},
    ).create_machine(
        {
            "id": "enq",
            "context": {"total": 0},
            "initial": "on",
            "states": {
                "on": {
                    "on": {
                        "ADD": {"actions": enqueue_actions(on_add)},
                        "BIG": {"actions": enqueue_actions(on_big)},
                    },
                },
            },
        }
    )
