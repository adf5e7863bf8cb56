"""Twin of agent_loop.mjs: the agent loop with invokes, guards on context, error/cancel paths,
stale completions, a history capped at 20, a final state with output, events after done."""

from collections.abc import Callable
from typing import Any

from agent_explorer.engine import assign, from_promise, setup


async def think(input: Any) -> Any:
    return {"final": True, "text": input["question"]}


async def act(input: Any) -> Any:
    return {"observation": input["name"]}


def remember(entry: Callable[[Any, Any], str]) -> Any:
    return assign({"history": lambda c, e, p: [*c["history"], entry(c, e)][-20:]})


def is_final(c: Any, e: Any, p: Any) -> bool:
    return (c["lastThought"] or {}).get("final") is True


def wants_tool(c: Any, e: Any, p: Any) -> bool:
    return isinstance((c["lastThought"] or {}).get("tool"), dict)


def build() -> Any:
    return setup(
        actors={"think": from_promise(think), "act": from_promise(act)},
        guards={
            "isFinal": is_final,
            "wantsTool": wants_tool,
            "tooManyErrors": lambda c, e, p: c["errors"] >= p["max"],
        },
        actions={"notifyUser": lambda c, e, p: None},
    ).create_machine(
        {
            "id": "agent",
            "context": lambda input: {
                "question": None,
                "turn": 0,
                "errors": 0,
                "answers": 0,
                "lastThought": None,
                "history": [],
                "model": input["model"],
            },
            "initial": "idle",
            "states": {
                "idle": {
                    "on": {
                        "ASK": {
                            "target": "thinking",
                            "actions": [
                                assign(
                                    {
                                        "question": lambda c, e, p: e["question"],
                                        "turn": 0,
                                    }
                                ),
                                remember(lambda c, e: f"ask:{e['question']}"),
                            ],
                        },
                    },
                },
                "thinking": {
                    "tags": ["busy"],
                    "invoke": {
                        "id": "llm",
                        "src": "think",
                        "input": lambda c, e, p: {
                            "question": c["question"],
                            "turn": c["turn"],
                            "model": c["model"],
                        },
                        "onDone": {
                            "target": "deciding",
                            "actions": [
                                assign({"lastThought": lambda c, e, p: e["output"]}),
                                remember(lambda c, e: "thought"),
                            ],
                        },
                        "onError": [
                            {
                                "guard": {
                                    "type": "tooManyErrors",
                                    "params": {"max": 5},
                                },
                                "target": "failed",
                                "actions": remember(lambda c, e: "gave up"),
                            },
                            {
                                "target": "idle",
                                "actions": [
                                    assign({"errors": lambda c, e, p: c["errors"] + 1}),
                                    remember(lambda c, e: f"llm error:{e['error']}"),
                                ],
                            },
                        ],
                    },
                    "on": {
                        "CANCEL": {
                            "target": "idle",
                            "actions": remember(lambda c, e: "cancel thinking"),
                        }
                    },
                },
                "deciding": {
                    "always": [
                        {
                            "guard": "isFinal",
                            "target": "idle",
                            "actions": [
                                assign({"answers": lambda c, e, p: c["answers"] + 1}),
                                "notifyUser",
                                remember(lambda c, e: "answer"),
                            ],
                        },
                        {"guard": "wantsTool", "target": "acting"},
                        {
                            "target": "thinking",
                            "actions": [
                                assign({"turn": lambda c, e, p: c["turn"] + 1}),
                                remember(lambda c, e: "rethink"),
                            ],
                        },
                    ],
                },
                "acting": {
                    "tags": ["busy", "tool"],
                    "invoke": {
                        "id": "tool",
                        "src": "act",
                        "input": lambda c, e, p: c["lastThought"]["tool"],
                        "onDone": {
                            "target": "thinking",
                            "actions": [
                                assign({"turn": lambda c, e, p: c["turn"] + 1}),
                                remember(
                                    lambda c, e: f"obs:{e['output']['observation']}"
                                ),
                            ],
                        },
                        "onError": {
                            "target": "thinking",
                            "actions": [
                                assign({"errors": lambda c, e, p: c["errors"] + 1}),
                                remember(lambda c, e: "tool error"),
                            ],
                        },
                    },
                    "on": {
                        "CANCEL": {
                            "target": "idle",
                            "actions": remember(lambda c, e: "cancel acting"),
                        }
                    },
                },
                "failed": {"type": "final"},
            },
            "output": lambda c, e, p: {
                "answers": c["answers"],
                "errors": c["errors"],
                "last": c["history"][-1] if c["history"] else None,
            },
        }
    )
