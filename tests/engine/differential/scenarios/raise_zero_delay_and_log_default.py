"""Twin of raise_zero_delay_and_log_default.mjs: delay 0, named send delay, log(), cancel a timer."""

from typing import Any

from agent_explorer.engine import (
    assign,
    cancel,
    from_promise,
    log,
    raise_,
    send_to,
    setup,
)


async def svc(input: Any) -> int:
    return 0


def build() -> Any:
    return setup(delays={"soon": 20}, actors={"svc": from_promise(svc)}).create_machine(
        {
            "id": "corners",
            "context": {"n": 0},
            "initial": "a",
            "states": {
                "a": {
                    "invoke": {"id": "svc", "src": "svc"},
                    "after": {100: "b"},
                    "on": {
                        "ZERO": {"actions": raise_({"type": "TICK"}, delay=0)},
                        "TICK": {"actions": assign({"n": lambda c, e, p: c["n"] + 1})},
                        "SEND": {
                            "actions": send_to(
                                "svc", {"type": "HI"}, delay="soon", id="hi"
                            )
                        },
                        "LOG": {"actions": log()},
                        "LOG_LABEL": {"actions": log(label="with label")},
                        "STOP_TIMER": {"actions": cancel("xstate.after.100.corners.a")},
                    },
                },
                "b": {},
            },
        }
    )
