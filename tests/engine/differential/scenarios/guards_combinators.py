"""Twin of guards_combinators.mjs: and_/or_/not_ over named (with params) and inline guards."""

from typing import Any

from agent_explorer.engine import and_, assign, not_, or_, setup


def build() -> Any:
    return setup(
        guards={
            "isAdmin": lambda c, e, p: c["role"] == "admin",
            "isOwner": lambda c, e, p: c["user"] == e["owner"],
            "hasFlag": lambda c, e, p: p["flag"] in c["flags"],
        },
    ).create_machine(
        {
            "id": "acl",
            "context": lambda input: {
                "role": input["role"],
                "user": input["user"],
                "flags": [],
                "log": [],
            },
            "initial": "idle",
            "states": {
                "idle": {
                    "on": {
                        "EDIT": [
                            {
                                "guard": or_(
                                    [
                                        "isAdmin",
                                        and_(
                                            [
                                                "isOwner",
                                                not_(
                                                    {
                                                        "type": "hasFlag",
                                                        "params": {"flag": "locked"},
                                                    }
                                                ),
                                            ]
                                        ),
                                    ]
                                ),
                                "actions": assign(
                                    {
                                        "log": lambda c, e, p: [
                                            *c["log"],
                                            f"edit {e['owner']}",
                                        ]
                                    }
                                ),
                            },
                            {
                                "actions": assign(
                                    {
                                        "log": lambda c, e, p: [
                                            *c["log"],
                                            f"denied {e['owner']}",
                                        ]
                                    }
                                )
                            },
                        ],
                        "LOCK": {
                            "actions": assign(
                                {"flags": lambda c, e, p: [*c["flags"], "locked"]}
                            )
                        },
                        "PROMOTE": {"actions": assign({"role": "admin"})},
                        "DELETE": {
                            "guard": and_(
                                ["isAdmin", lambda c, e, p: e["confirm"] is True]
                            ),
                            "target": "deleted",
                        },
                    },
                },
                "deleted": {},
            },
        }
    )
