"""Twin of guards_named_params.mjs: named guards with and without params."""

from typing import Any

from agent_explorer.engine import assign, setup


def build() -> Any:
    return setup(
        guards={
            "atLeast": lambda c, e, p: c["balance"] >= p["min"],
            "matchesCode": lambda c, e, p: e["code"] == p["code"],
            "covers": lambda c, e, p: c["balance"] >= e["amount"] + p["fee"],
        },
    ).create_machine(
        {
            "id": "atm",
            "context": {"balance": 50},
            "initial": "ready",
            "states": {
                "ready": {
                    "on": {
                        "WITHDRAW": [
                            {
                                "guard": {"type": "covers", "params": {"fee": 0}},
                                "actions": assign(
                                    {
                                        "balance": lambda c, e, p: (
                                            c["balance"] - e["amount"]
                                        )
                                    }
                                ),
                            },
                            {"target": "refused"},
                        ],
                        "BONUS": {
                            "guard": {"type": "matchesCode", "params": {"code": "X1"}},
                            "actions": assign(
                                {"balance": lambda c, e, p: c["balance"] + 100}
                            ),
                        },
                        "VIP": {
                            "guard": {"type": "atLeast", "params": {"min": 120}},
                            "target": "vip",
                        },
                    },
                },
                "refused": {"on": {"OK": "ready"}},
                "vip": {},
            },
        }
    )
