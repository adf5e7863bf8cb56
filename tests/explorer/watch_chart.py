"""A large parallel statechart in the style of Harel's digital watch, and a recorded random walk over it.

Written the way a third party writes such a chart, not the way this project's samples are: a root parallel
state with six regions, nested compound states several levels deep, five history states (shallow and deep),
and `state_in` guards that let one region look at another. 70+ nodes: too large to read whole in the chart
panel at its default size, so the browser tests use it to check that the view opens on, and follows, the state
the last step entered.

Deterministic: a seeded walk, a fixed clock and ids (sample_run.record), so a run built twice is byte-identical.
"""

from __future__ import annotations

import random
from typing import Any

from sample_run import record

from agent_explorer.engine import initial_transition, setup, state_in, transition


def _digits(prefix: str, n: int, event: str, back: str) -> dict[str, Any]:
    """A chain of `n` settable fields (`prefix0` ... ): `event` moves on, `back` returns to the first."""
    states: dict[str, Any] = {}
    for i in range(n):
        states[f"{prefix}{i}"] = {"on": {event: f"{prefix}{(i + 1) % n}", back: f"{prefix}0"}}
    return {"initial": f"{prefix}0", "states": states}


def watch_machine() -> Any:
    """The watch: displays (time, date, stopwatch, two alarms, chime, update), the alarms' and chime's
    statuses, the light, the power and the beeper, in six parallel regions."""
    displays = {
        "initial": "time",
        "states": {
            "time": {
                "on": {
                    "A": "alarm1",
                    "D": "date",
                    "C_DOWN": "wait",
                    "STOPWATCH": "stopwatch",
                }
            },
            "date": {"on": {"D": "time", "TIMEOUT": "time"}},
            "wait": {"on": {"C_UP": "time", "TIMEOUT": "update"}},
            "update": {
                "initial": "sec",
                "on": {"B": "time"},
                "states": {
                    "sec": {"on": {"C": "min"}},
                    "min": {"on": {"C": "hour"}},
                    "hour": {"on": {"C": "ten_min"}},
                    "ten_min": {"on": {"C": "month"}},
                    "month": {"on": {"C": "day"}},
                    "day": {"on": {"C": "year"}},
                    "year": {"on": {"C": "mode"}},
                    "mode": {"on": {"C": "sec"}},
                    "hist": {"type": "history"},
                },
            },
            "alarm1": {
                "initial": "off_screen",
                "on": {"A": "alarm2"},
                "states": {
                    "off_screen": {"on": {"D": "on_screen"}},
                    "on_screen": {"on": {"D": "off_screen", "C": "setting"}},
                    "setting": {"on": {"B": "on_screen"}, **_digits("a1_field", 4, "C", "RESET")},
                    "hist": {"type": "history", "history": "deep"},
                },
            },
            "alarm2": {
                "initial": "off_screen",
                "on": {"A": "chime"},
                "states": {
                    "off_screen": {"on": {"D": "on_screen"}},
                    "on_screen": {"on": {"D": "off_screen", "C": "setting"}},
                    "setting": {"on": {"B": "on_screen"}, **_digits("a2_field", 4, "C", "RESET")},
                },
            },
            "chime": {
                "initial": "off_screen",
                "on": {"A": "stopwatch"},
                "states": {
                    "off_screen": {"on": {"D": "on_screen"}},
                    "on_screen": {"on": {"D": "off_screen"}},
                },
            },
            "stopwatch": {
                "initial": "zero",
                "on": {"A": "time"},
                "states": {
                    "zero": {"on": {"B": "running.reg"}},
                    "running": {
                        "initial": "reg",
                        "on": {"D": "zero"},
                        "states": {
                            "reg": {"on": {"B": "paused", "LAP": "lap"}},
                            "lap": {"on": {"LAP": "reg", "B": "paused"}},
                            "paused": {"on": {"B": "reg"}},
                            "hist": {"type": "history"},
                        },
                    },
                    "hist": {"type": "history", "history": "deep"},
                },
            },
            "hist": {"type": "history", "history": "deep"},
        },
    }
    statuses = {
        "type": "parallel",
        "states": {
            "alarm1_status": {
                "initial": "disabled",
                "states": {
                    "disabled": {"on": {"D": {"target": "enabled", "guard": state_in("#watch.main.displays.alarm1")}}},
                    "enabled": {"on": {"D": {"target": "disabled", "guard": state_in("#watch.main.displays.alarm1")}}},
                },
            },
            "alarm2_status": {
                "initial": "disabled",
                "states": {
                    "disabled": {"on": {"D": {"target": "enabled", "guard": state_in("#watch.main.displays.alarm2")}}},
                    "enabled": {"on": {"D": {"target": "disabled", "guard": state_in("#watch.main.displays.alarm2")}}},
                },
            },
            "chime_status": {
                "initial": "disabled",
                "states": {
                    "disabled": {"on": {"D": {"target": "enabled", "guard": state_in("#watch.main.displays.chime")}}},
                    "enabled": {
                        "initial": "quiet",
                        "on": {"D": {"target": "disabled", "guard": state_in("#watch.main.displays.chime")}},
                        "states": {
                            "quiet": {"on": {"HOUR": "beep"}},
                            "beep": {"on": {"TIMEOUT": "quiet", "A": "quiet", "B": "quiet"}},
                        },
                    },
                },
            },
        },
    }
    return setup().create_machine(
        {
            "id": "watch",
            "type": "parallel",
            "context": {},
            "states": {
                "main": {
                    "initial": "displays",
                    "states": {
                        "displays": displays,
                        "alarms_beep": {
                            "initial": "beeping",
                            "on": {"A": "#watch.main.displays.hist", "B": "#watch.main.displays.hist"},
                            "states": {
                                "beeping": {"on": {"TIMEOUT": "silent"}},
                                "silent": {"on": {"TIMEOUT": "beeping"}},
                            },
                        },
                    },
                    "on": {"ALARM": ".alarms_beep"},
                },
                "statuses": statuses,
                "light": {
                    "initial": "off",
                    "states": {"off": {"on": {"B_DOWN": "on"}}, "on": {"on": {"B_UP": "off"}}},
                },
                "power": {
                    "initial": "ok",
                    "states": {
                        "ok": {"on": {"WEAK": "blink"}},
                        "blink": {"on": {"NEW_BATTERY": "ok", "DIES": "dead"}},
                        "dead": {"on": {"NEW_BATTERY": "ok"}},
                    },
                },
                "beeper": {
                    "initial": "idle",
                    "states": {
                        "idle": {"on": {"BEEP_TEST": "testing"}},
                        "testing": {
                            "initial": "high",
                            "on": {"B_UP": "idle"},
                            "states": {"high": {"on": {"TICK": "low"}}, "low": {"on": {"TICK": "high"}}},
                        },
                    },
                },
                "display_mode": {
                    "initial": "normal",
                    "states": {
                        "normal": {"on": {"CONTRAST": "high_contrast"}},
                        "high_contrast": {"on": {"CONTRAST": "normal"}},
                        "hist": {"type": "history"},
                    },
                },
            },
        }
    )


EVENTS = (
    "A", "B", "C", "D", "C_DOWN", "C_UP", "TIMEOUT", "STOPWATCH", "LAP", "RESET", "HOUR", "ALARM", "B_DOWN",
    "B_UP", "WEAK", "NEW_BATTERY", "DIES", "BEEP_TEST", "TICK", "CONTRAST",
)  # fmt: skip


def watch_walk(machine: Any, steps: int, *, seed: int = 7) -> list[dict[str, Any]]:
    """`steps` events, each one the watch accepts where it is (it changes the state), chosen by a seeded walk."""
    rng = random.Random(seed)
    snapshot, _ = initial_transition(machine)
    events: list[dict[str, Any]] = []
    while len(events) < steps:
        for name in rng.sample(EVENTS, len(EVENTS)):
            after, _ = transition(machine, snapshot, {"type": name})
            if after.value != snapshot.value:
                events.append({"type": name})
                snapshot = after
                break
        else:  # nothing changes anything: cannot happen on this chart, but never loop forever
            raise AssertionError(f"the watch accepts no event at {snapshot.value!r}")
    return events


def watch_run(machine: Any, steps: int = 60, *, seed: int = 7) -> list[dict[str, Any]]:
    """A recorded log of a seeded random walk over the watch (the init entry, then `steps` events)."""
    return record(machine, watch_walk(machine, steps, seed=seed))


def node_count(machine: Any) -> int:
    """Every state node of the chart, the root and history states included."""
    count = 0
    stack = [machine.root]
    while stack:
        node = stack.pop()
        count += 1
        stack.extend(node.states.values())
    return count
