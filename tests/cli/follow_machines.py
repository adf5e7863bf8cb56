"""The machine the follow tests' writer runs and the CLI verifies against (`--machine follow_machines:counter`)."""

from agent_explorer import assign, setup

counter = setup().create_machine({
    "id": "follow_counter",
    "version": "1",
    "context": {"count": 0},
    "initial": "counting",
    "states": {
        "counting": {
            "on": {
                "INC": {"actions": assign({"count": lambda context, event, params: context["count"] + 1})},
                "STOP": "stopped",
            },
        },
        "stopped": {"type": "final"},
    },
})
