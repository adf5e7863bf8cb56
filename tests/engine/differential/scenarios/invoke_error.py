"""Twin of invoke_error.mjs: onError (guarded retry with reenter) via xstate.error.actor.<id>."""

from typing import Any

from agent_explorer.engine import assign, from_promise, setup


async def pay(input: Any) -> str:
    return "ok"


def build() -> Any:
    keep_error = assign({"lastError": lambda c, e, p: e["error"]})
    return setup(actors={"pay": from_promise(pay)}).create_machine(
        {
            "id": "checkout",
            "context": {"attempts": 0, "lastError": None},
            "initial": "paying",
            "states": {
                "paying": {
                    "entry": assign({"attempts": lambda c, e, p: c["attempts"] + 1}),
                    "invoke": {
                        "id": "payment",
                        "src": "pay",
                        "input": lambda c, e, p: {"attempt": c["attempts"]},
                        "onDone": "paid",
                        "onError": [
                            {
                                "guard": lambda c, e, p: c["attempts"] < 2,
                                "target": "paying",
                                "reenter": True,
                                "actions": keep_error,
                            },
                            {"target": "failed", "actions": keep_error},
                        ],
                    },
                },
                "paid": {"type": "final"},
                "failed": {},
            },
        }
    )
